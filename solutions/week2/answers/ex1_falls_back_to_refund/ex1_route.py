def route(state):
    intent = state.get('intent')
    return intent if intent in ('refund', 'pause', 'cancel') else 'refund'
