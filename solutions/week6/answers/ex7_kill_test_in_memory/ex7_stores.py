STORE_FOR = {"ci": "InMemorySaver", "kill_test": "InMemorySaver", "desk": "SqliteSaver",
             "cloud": "PostgresSaver", "fleet": "PostgresSaver", "demo": "InMemorySaver"}
