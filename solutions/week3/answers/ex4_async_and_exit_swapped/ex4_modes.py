### BEGIN SOLUTION
MODES = {"A": "sync", "B": "exit", "C": "async"}
### END SOLUTION
