### BEGIN SOLUTION
MODES = {"A": "sync", "B": "sync", "C": "sync"}
### END SOLUTION
