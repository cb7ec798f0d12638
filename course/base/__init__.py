"""Ground floor: tiny primitives every other layer may use. Imports nothing of the course.

- :mod:`course.base.table`: :class:`Table`, rows that print as text and render as
  HTML in Jupyter (ledgers, crash matrices, audits).
- :mod:`course.base.crashpoints`: named crash points; no-ops outside the crash
  harness, a real SIGKILL inside one of its workers.
- :mod:`course.base.fork`: :func:`~course.base.fork.start` a body in a forked child,
  wait for it with a deadline, kill, stop or continue it, read how it ended; the one
  place of the course that forks (Linux and macOS).
- :mod:`course.base.scratch`: :func:`scratch_folder`, a notebook's temporary folder,
  removed when its kernel stops; :func:`shown_path`, a path as a message shows it;
  :func:`~course.base.scratch.ram_or_temp`, RAM for many short-lived files if it has room.
- :mod:`course.base.platform`: the Pythons and systems the course supports, said once.
- :mod:`course.base.lazy_rfc3987`: ``import jsonschema`` without its 2 s IRI parser.
- :mod:`course.base.npm`: pinned npm packages (the hub's proxy, the Claude Code CLI).
"""

from course.base import crashpoints
from course.base.scratch import scratch_folder, shown_path
from course.base.table import Table

__all__ = ["Table", "crashpoints", "scratch_folder", "shown_path"]
