"""CloudWave's fixed, deterministic customer data: customers, subscriptions, invoices.

Every simulator validates against this catalogue, so an unknown invoice or
customer is rejected the way a real provider would reject it.
"""

from __future__ import annotations

from dataclasses import dataclass

CURRENCIES = frozenset({"usd", "eur", "gbp"})
MAX_CENTS = 99_999_999  # the largest single amount the provider accepts ($999,999.99)


@dataclass(frozen=True)
class Customer:
    id: str
    name: str
    email: str


@dataclass(frozen=True)
class Invoice:
    id: str
    customer_id: str
    cents: int
    currency: str
    description: str


@dataclass(frozen=True)
class Subscription:
    id: str
    customer_id: str
    plan: str


CUSTOMERS = {
    c.id: c
    for c in [
        Customer("cus_ada", "Ada Okafor", "ada@example.com"),
        Customer("cus_marta", "Marta Ruiz", "marta@example.com"),
        Customer("cus_lin", "Lin Chen", "lin@example.com"),
        Customer("cus_sam", "Sam Patel", "sam@example.com"),
    ]
}

INVOICES = {
    i.id: i
    for i in [
        Invoice("inv_9", "cus_ada", 2900, "usd", "CloudWave Pro, monthly"),
        Invoice("inv_10", "cus_ada", 4900, "usd", "CloudWave Team, monthly"),
        Invoice("inv_11", "cus_marta", 12900, "eur", "CloudWave Business, monthly"),
        Invoice("inv_12", "cus_lin", 990, "gbp", "CloudWave Starter, monthly"),
        Invoice("inv_13", "cus_sam", 2900, "usd", "CloudWave Pro, monthly"),
    ]
}

SUBSCRIPTIONS = {
    s.id: s
    for s in [
        Subscription("sub_ada", "cus_ada", "pro"),
        Subscription("sub_marta", "cus_marta", "business"),
        Subscription("sub_lin", "cus_lin", "starter"),
        Subscription("sub_sam", "cus_sam", "pro"),
    ]
}


def subscription_of(customer_id: str) -> Subscription:
    """The one subscription a customer has (each CloudWave customer has exactly one)."""
    for sub in SUBSCRIPTIONS.values():
        if sub.customer_id == customer_id:
            return sub
    raise KeyError(f"customer {customer_id!r} has no subscription")
