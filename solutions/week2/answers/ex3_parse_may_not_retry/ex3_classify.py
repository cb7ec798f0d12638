KINDS = {'parse': 'read', 'retrieve': 'read', 'refund': 'write', 'pause': 'write', 'cancel': 'write', 'answer': 'read', 'email': 'write'}
MAY_RETRY = {'parse': False, 'retrieve': True, 'refund': False, 'pause': False, 'cancel': False, 'answer': False, 'email': False}
