STORE_FOR = {"ci": "SqliteSaver", "kill_test": "SqliteSaver", "desk": "SqliteSaver",
             "cloud": "PostgresSaver", "fleet": "PostgresSaver", "demo": "SqliteSaver"}
