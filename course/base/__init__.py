"""Ground floor: tiny primitives every other layer may use. Imports nothing of the course.

- :mod:`course.base.table`: :class:`Table`, rows that print as text and render as
  HTML in Jupyter (ledgers, crash matrices, audits).
- :mod:`course.base.crashpoints`: named crash points; no-ops outside the crash
  harness, a real SIGKILL inside one of its workers.
"""

from course.base import crashpoints
from course.base.table import Table

__all__ = ["Table", "crashpoints"]
