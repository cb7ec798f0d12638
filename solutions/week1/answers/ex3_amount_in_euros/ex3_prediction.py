PREDICTION = {"intent": "refund", "invoice_id": "inv_11", "customer_id": "cus_marta", "cents": 129.0, "currency": "eur", "log": ["parse", "retrieve", "refund", "email"]}
