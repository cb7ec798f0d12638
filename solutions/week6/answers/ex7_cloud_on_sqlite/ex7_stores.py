STORE_FOR = {"ci": "InMemorySaver", "kill_test": "SqliteSaver", "desk": "SqliteSaver",
             "cloud": "SqliteSaver", "fleet": "PostgresSaver", "demo": "InMemorySaver"}
