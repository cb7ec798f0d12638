STORE_FOR = {"ci": "InMemorySaver", "desk": "SqliteSaver", "cloud": "SqliteSaver",
             "fleet": "PostgresSaver", "demo": "InMemorySaver"}
