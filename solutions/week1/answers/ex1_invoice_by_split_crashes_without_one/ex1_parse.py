import re


def parse(state, world):
    text = state['message']
    rules = (('refund', 'refund'), ('pause', 'pause'), ('cancel', 'cancel'), ('pay', 'charge'), ('charge', 'charge'))
    lowered = text.lower()
    intent = next((name for w, name in rules if w in lowered), 'unknown')
    invoice = 'inv_' + text.split('inv_')[1].split()[0].strip('.,!?')
    return {'intent': intent, 'invoice_id': invoice, 'log': ['parse']}
