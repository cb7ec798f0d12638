### BEGIN SOLUTION
WRITES = {"parse": False, "retrieve": False, "refund": False, "cancel": True,
          "notify_partner": False, "email": False}
### END SOLUTION
