KINDS = {'parse': 'read', 'retrieve': 'read', 'refund': 'write', 'pause': 'write', 'cancel': 'write', 'answer': 'read', 'email': 'read'}
MAY_RETRY = {'parse': True, 'retrieve': True, 'refund': False, 'pause': False, 'cancel': False, 'answer': True, 'email': True}
