import re


def parse(state, world):
    text = state['message']
    lowered = text.lower()
    intent = next((w for w in ('refund', 'pause', 'cancel') if w in lowered), 'unknown')
    found = re.search(r'inv_\d+', text)
    return {'intent': intent, 'invoice_id': found.group(0) if found else '', 'log': ['parse']}
