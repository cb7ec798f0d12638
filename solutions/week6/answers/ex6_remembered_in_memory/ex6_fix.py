DONE = {}


def fixed_tools(world, thread_id):
    tools = support_tools(world, thread_id, keyed=False)

    def once(name):
        def call(invoice_id):
            if (name, invoice_id) not in DONE:
                DONE[name, invoice_id] = tools[name](invoice_id=invoice_id)
            return DONE[name, invoice_id]
        return call

    return {**tools, "charge": once("charge"), "send_receipt": once("send_receipt")}
