import re


def parse(state, world):
    """Intent and invoice id from the customer's message."""
    text = state["message"]
    lowered = text.lower()
    rules = (("refund", "refund"), ("pause", "pause"), ("cancel", "cancel"),
             ("pay", "charge"), ("charge", "charge"))
    intent = next((name for word, name in rules if word in lowered), "unknown")
    found = re.search(r"\binv_\d+", text)
    return {"intent": intent, "invoice_id": found.group(0) if found else "", "log": ["parse"]}
