import re


def parse(state, world):
    text = state['message']
    rules = (('refund', 'refund'), ('pause', 'pause'), ('cancel', 'cancel'), ('pay', 'charge'), ('charge', 'charge'))
    intent = next((name for w, name in rules if w in text), 'unknown')
    found = re.search(r'inv_\d+', text)
    return {'intent': intent, 'invoice_id': found.group(0) if found else '', 'log': ['parse']}
