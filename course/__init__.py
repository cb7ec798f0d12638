"""Crash, Resume, Don't Charge Twice: the course package.

The package holds the machinery; the notebooks hold the lessons. It is built in
floors, and a module may import only from its own floor or the floors below it
(``tests/test_layering.py`` fails otherwise):

========================  ==============================================================
floor                     what lives there
========================  ==============================================================
``course.base``           Table, crash points: tiny primitives with no course imports
``course.host``           this machine's accounts: the unprivileged one, what it may reach
``course.storage``        SQLite helpers, per-thread connections, a throwaway Postgres
``course.durable``        idempotency stores, ``guarded``/``reconcile``, leases, recovery
``course.world``          CloudWave's outside world: catalogue, bank, mail, ledger
``course.cloudwave``      the agent: state, graph builder, reference nodes, scripted model
``course.travel``         Marta's flight: airline, guarded booking, Deep Agents, Claude SDK
``course.crash``          the crash harness (real SIGKILLs), fuzzer, concurrent resumers
``course.grader``         what a week is; nbgrader on one notebook (``make check``); verdicts
``course.sandbox``        a graded kernel walled in (bubblewrap) and watched (the test guard)
``course.term``           a class: ``make grade``, feedback, export, late work, LMS, the hub
``course.classroom``      widgets and pictures; ``make lab``
``course.grading``        the graded tests' and lessons' helpers (``run_forked``, ``Spy``...)
``course.audit``          ``python -m course.audit``: which side effects can a crash repeat?
========================  ==============================================================

``classroom``, ``grading`` and ``audit`` share the top floor and do not import each other.
Notebooks import from a floor's public names (``from course.durable import guarded``),
never from a module inside it.
"""

from course.base.platform import require_posix

require_posix()  # native Windows: one line saying to use WSL2, not an error deep in week 3

# Before any floor imports nbformat (and so jsonschema): ~2 s saved per process where the
# virtualenv lacks make setup's .pth line (course.base.lazy_rfc3987; it never changes an
# answer, and is what that .pth line does in every interpreter anyway).
from course.base.lazy_rfc3987 import install as _lazy_rfc3987  # noqa: E402

_lazy_rfc3987()

__version__ = "0.1.0"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("base",),
    ("host",),
    ("storage",),
    ("durable",),
    ("world",),
    ("cloudwave",),
    ("travel",),
    ("crash",),
    ("grader",),
    ("sandbox",),
    ("term",),
    ("classroom", "grading", "audit"),
)
"""The floors, bottom first. Names on one floor may not import each other, except themselves."""
