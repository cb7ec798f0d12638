"""Grading: ``make check`` / ``make release`` and the helpers graded tests share.

May import: every layer below (the graded tests build worlds, graphs and crashes).

- :mod:`course.grading.checks`: what visible and hidden tests use: run a
  function in a genuinely new interpreter, perturb clocks and randomness, fork
  and kill, spy on a receiver, name the course's functions a call ran, and set a
  notebook's policy aside for the course's (:func:`in_fresh_interpreter`,
  :func:`perturbed`, :func:`run_forked`, :func:`kill_self`, :class:`Spy`,
  :class:`DiesAfter`, :func:`course_code_run`, :func:`course_policy_in`).
- :mod:`course.grading.node_spy`: :func:`count_runs`, how many times each node started.
- :mod:`course.grading.declaration`: what a week is (``solutions/weekN/week.toml`` and its
  known answers), read by one loader that checks it against the notebook;
  :mod:`course.grading.verdict`: how a failed test is worded, everywhere.
- :mod:`course.grading.autograde`: ``python -m course.grading``: nbgrader's own
  generate_assignment + autograde in a throwaway course folder.
- :mod:`course.grading.instructor`: the instructor's steps (release and register,
  exchange, collect, feedback, return, export, roster, due dates);
  :mod:`course.grading.classgrade`: ``make grade``, a class graded in parallel groups
  merged into one gradebook by :mod:`course.grading.merge` (one transaction per student,
  hand grades of unchanged answers kept); :mod:`course.grading.late`: due dates and the
  late penalty in nbgrader's terms.
- :mod:`course.grading.sandbox`: the notebook time budget, the test guard and the
  sandboxed kernel; :mod:`course.grading.jail`: the sandbox's allow-list (bubblewrap);
  :mod:`course.grading.kernel`: the graded kernel's entry point (attempts pipe);
  :mod:`course.grading.intact`: the kernel's hooks put back before every test;
  :mod:`course.grading.references`: the watch on each exercise's reference implementation;
  :mod:`course.grading.restore`: quiet test-cell restore;
  :mod:`course.grading.feedback`: feedback without hidden tests or grading paths;
  :mod:`course.grading.rubric`: rubrics for graders.
- :mod:`course.grading.edition` / :mod:`course.grading.selfcheck`: the student edition
  and its visible-tests-only ``make check``.
- :mod:`course.grading.hub`: the class JupyterHub's own environment (``make hub-deps``;
  its configuration is ``scripts/hub/jupyterhub_config.py``).
"""

# First, before anything imports nbformat (and so jsonschema): ~2 s saved per process.
from course.base.lazy_rfc3987 import install as _lazy_rfc3987

_lazy_rfc3987()

from course.grading.checks import (  # noqa: E402
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
from course.grading.node_spy import count_runs  # noqa: E402

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
