### BEGIN SOLUTION
WRITES = {"refund": False, "cancel": True}
### END SOLUTION
