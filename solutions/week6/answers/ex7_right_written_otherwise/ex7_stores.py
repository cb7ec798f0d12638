SURVIVES = {"InMemorySaver": 0, "SqliteSaver": 1, "PostgresSaver": 2}  # the lightest first
MUST_SURVIVE = {"ci": 0, "demo": 0, "kill_test": 1, "desk": 1, "cloud": 2, "fleet": 2}
STORE_FOR = {name: min(SURVIVES, key=lambda store: (SURVIVES[store] < need, SURVIVES[store]))
             for name, need in MUST_SURVIVE.items()}
