"""The ledger counts what landed per invoice and lists every double, whatever its size."""

from __future__ import annotations

ADA = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900}


def test_doubles_lists_every_invoice_hit_more_than_once_and_nothing_else(world):
    world.billing.charge(**ADA, idempotency_key="a1")
    world.billing.charge(**ADA, idempotency_key="a2")  # inv_9 charged twice
    world.billing.charge(customer_id="cus_ada", invoice_id="inv_10", cents=4900,
                         idempotency_key="b1")  # inv_10 once: not a double
    for key in ("r1", "r2", "r3"):  # three refunds of 100 cents on inv_9
        world.billing.refund(customer_id="cus_ada", invoice_id="inv_9", cents=100,
                             idempotency_key=key)
    ledger = world.ledger()
    assert ledger.count("charges") == 3 and ledger.count("charges", "inv_9") == 2
    assert ledger.doubles() == [
        {"invoice_id": "inv_9", "what": "charges", "count": 2},
        {"invoice_id": "inv_9", "what": "refunds", "count": 3},
    ]


def test_a_clean_world_has_no_doubles(world):
    world.billing.charge(**ADA, idempotency_key="a1")
    world.billing.charge(**ADA, idempotency_key="a1")  # a replay, not a second charge
    assert world.ledger().doubles() == []
