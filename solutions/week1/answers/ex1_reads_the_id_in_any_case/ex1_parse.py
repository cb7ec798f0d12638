import re


def parse(state, world):
    """Intent and invoice id from the customer's message."""
    text = state["message"].lower()  # any case, as the instructions say
    if "refund" in text:
        intent = "refund"
    elif "pause" in text:
        intent = "pause"
    elif "cancel" in text:
        intent = "cancel"
    elif "pay" in text or "charge" in text:
        intent = "charge"
    else:
        intent = "unknown"
    found = re.search(r"\binv_\d+\b", text)
    return {"intent": intent, "invoice_id": found.group(0) if found else "", "log": ["parse"]}
