STORE_FOR = {"ci": "InMemorySaver", "desk": "InMemorySaver", "cloud": "PostgresSaver",
             "fleet": "PostgresSaver", "demo": "InMemorySaver"}
