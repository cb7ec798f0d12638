"""The idempotency audit: which side effects can a crash repeat?

May import: every floor below (it runs graphs under :mod:`course.crash`).
Shares the top floor with :mod:`course.classroom` and :mod:`course.grading`
and imports neither.

- :func:`audit` crashes a graph builder at every node and crash point (real
  SIGKILLs, resume in a new process) and returns an :class:`AuditReport`: one
  row per side effect (node, receiver, key, replayed on resume?, can a crash
  repeat it?) and the verdict ``effects=<n> keyed=<k> repeatable=<r>``.
- :class:`RecordingWorld` is how it sees the effects: a world that logs every
  call to billing, mail and the webhook with the node that made it.
- :mod:`course.audit.auditor` holds :func:`audit`, :mod:`course.audit.recorder` the
  recording world.
- ``python -m course.audit --graph naive|keyed`` or ``python -m course.audit
  package.module:builder`` prints the table.
"""

from course.audit.auditor import AuditError, AuditReport, Effect, audit, check_builder
from course.audit.recorder import RecordingWorld, read_calls

__all__ = ["AuditError", "AuditReport", "Effect", "RecordingWorld", "audit", "check_builder",
           "read_calls"]
