PREDICTION = {"intent": "refund", "invoice_id": "inv_11", "customer_id": "cus_marta", "cents": 12900, "currency": "EUR", "log": ["parse", "retrieve", "refund", "email"]}
