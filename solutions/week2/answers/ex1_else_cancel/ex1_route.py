def route(state):
    if state.get('intent') == 'refund':
        return 'refund'
    elif state.get('intent') == 'pause':
        return 'pause'
    else:
        return 'cancel'
