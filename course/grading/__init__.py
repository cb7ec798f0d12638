"""What graded tests and the lessons import: the helpers a notebook may call.

May import: every floor below the top (the graded tests build worlds, graphs and crashes).
The grader itself lives in :mod:`course.grader`, :mod:`course.sandbox` and
:mod:`course.term`; a notebook that imports those is held for a person.

- :mod:`course.grading.checks`: what visible and hidden tests use: run a
  function in a genuinely new interpreter, perturb clocks and randomness, fork
  and kill, spy on a receiver, name the course's functions a call ran, and set a
  notebook's policy aside for the course's (:func:`in_fresh_interpreter`,
  :func:`perturbed`, :func:`run_forked`, :func:`kill_self`, :class:`Spy`,
  :class:`DiesAfter`, :func:`course_code_run`, :func:`course_policy_in`); its parts
  :mod:`course.grading.checks_fresh` (a new interpreter) and
  :mod:`course.grading.checks_clock` (clocks and dice moved).
- :mod:`course.grading.node_spy`: :func:`count_runs`, how many times each node started.
"""

from course.grading.checks import (
    DiesAfter,
    NotPortable,
    Spy,
    course_code_run,
    course_policy_in,
    in_fresh_interpreter,
    kill_self,
    perturbed,
    portable_source,
    run_forked,
)
from course.grading.node_spy import count_runs

__all__ = [
    "DiesAfter",
    "NotPortable",
    "Spy",
    "count_runs",
    "course_code_run",
    "course_policy_in",
    "in_fresh_interpreter",
    "kill_self",
    "perturbed",
    "portable_source",
    "run_forked",
]
