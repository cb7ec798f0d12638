KINDS = {'parse': 'read', 'retrieve': 'read', 'refund': 'write', 'pause': 'write', 'cancel': 'write', 'answer': 'read', 'email': 'write'}
MAY_RETRY = {'parse': True, 'retrieve': True, 'refund': True, 'pause': True, 'cancel': True, 'answer': True, 'email': True}
