PREDICTION = {"intent": "cancel", "invoice_id": "inv_11", "customer_id": "cus_marta", "cents": 12900, "currency": "eur", "log": ["parse", "retrieve", "refund", "email"]}
