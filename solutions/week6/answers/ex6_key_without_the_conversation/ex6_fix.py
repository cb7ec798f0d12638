from course.cloudwave import receipt


def fixed_tools(world, thread_id):
    tools = support_tools(world, thread_id, keyed=False)

    def charge(invoice_id):
        found = tools["lookup_invoice"](invoice_id)
        return world.billing.charge(customer_id=found["customer_id"], invoice_id=invoice_id,
                                    cents=found["cents"], currency=found["currency"],
                                    idempotency_key=f"charge:{invoice_id}")

    def send_receipt(invoice_id):
        found = tools["lookup_invoice"](invoice_id)
        mail = receipt({**found, "intent": "charge"})
        return world.mail.send(**mail, email_id=f"receipt:{invoice_id}")

    return {**tools, "charge": charge, "send_receipt": send_receipt}
