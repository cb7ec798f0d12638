"""Crash, Resume, Don't Charge Twice: the course package.

The package holds the machinery; the notebooks hold the lessons.

- ``course.world``: CloudWave's outside world (customers, invoices), the billing
  simulator, the mail vendor and the key-ignoring webhook, the ledger.
- ``course.idempotency`` and ``course.guard``: the idempotency store (memory,
  SQLite, Postgres) and the ``guarded`` wrapper built on it.
- ``course.graph``: the CloudWave state and graph builder.
- ``course.nodes``: reference node implementations (naive and keyed).
- ``course.crash``: the crash harness (real SIGKILLs, forked warm workers).
- ``course.model``: a scripted chat model that works offline.
- ``course.classroom``: what students look at: the crash lab widget, the
  timeline chart, the p^n compounding explorer.
"""

__version__ = "0.1.0"
