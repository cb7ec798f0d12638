### BEGIN SOLUTION
WRITES = {"refund": False, "cancel": True, "notify_partner": True, "email": False}
### END SOLUTION
