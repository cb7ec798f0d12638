KINDS = {"parse": "read", "retrieve": "write", "refund": "write", "pause": "write",
         "cancel": "write", "answer": "read", "email": "write"}
MAY_RETRY = {"parse": True, "retrieve": False, "refund": False, "pause": False,
             "cancel": False, "answer": True, "email": False}
