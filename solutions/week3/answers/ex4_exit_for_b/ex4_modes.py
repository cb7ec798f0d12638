### BEGIN SOLUTION
MODES = {"A": "sync", "B": "exit", "C": "exit"}
### END SOLUTION
