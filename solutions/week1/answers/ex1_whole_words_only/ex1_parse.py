import re


def parse(state, world):
    text = state['message']
    rules = (('refund', 'refund'), ('pause', 'pause'), ('cancel', 'cancel'), ('pay', 'charge'), ('charge', 'charge'))
    words = set(re.findall(r'[a-z]+', text.lower()))
    intent = next((name for w, name in rules if w in words), 'unknown')
    found = re.search(r'\binv_\d+\b', text)
    return {'intent': intent, 'invoice_id': found.group(0) if found else '', 'log': ['parse']}
