### BEGIN SOLUTION
MODES = {"A": "async", "B": "async", "C": "async"}
### END SOLUTION
