import re


def parse(state, world):
    """Intent and invoice id from the customer's message."""
    lowered = state["message"].lower()
    words = {"refund": "refund", "pause": "pause", "cancel": "cancel", "pay": "charge",
             "charge": "charge"}
    found = sorted((lowered.find(word), intent) for word, intent in words.items()
                   if word in lowered)
    intent = found[0][1] if found else "unknown"  # the word that comes first in the message
    invoice = re.search(r"inv_\d+", state["message"])
    return {"intent": intent, "invoice_id": invoice.group(0) if invoice else "", "log": ["parse"]}
