STORE_FOR = {"ci": "InMemorySaver", "kill_test": "SqliteSaver", "desk": "InMemorySaver",
             "cloud": "PostgresSaver", "fleet": "PostgresSaver", "demo": "InMemorySaver"}
