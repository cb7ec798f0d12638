def route(state):
    return state['intent']
