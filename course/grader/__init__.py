"""The grader: what a week is, nbgrader run on one notebook, and how a verdict is worded.

May import: every floor up to :mod:`course.crash`. Nothing here starts a sandbox or knows
a class: :mod:`course.sandbox` and :mod:`course.term` stand on it.

- :mod:`course.grader.declaration`: what a week is (``solutions/weekN/week.toml``), read
  by one loader (the types: :mod:`course.grader.week`) that checks it against the notebook
  (:mod:`course.grader.consistency`, reading it with :mod:`course.grader.cells`); its known
  answers: :mod:`course.grader.known_answers`;
  :mod:`course.grader.verdict`: how a failed test is worded, everywhere.
- :mod:`course.grader.autograde`: nbgrader's own generate_assignment + autograde in a
  throwaway course folder; :mod:`course.grader.scoring` reads its gradebook and executed
  notebook into a :mod:`course.grader.report` (what ``make check`` prints);
  :mod:`course.grader.cli`: ``python -m course.grader`` (``make check``, ``make release``).
- :mod:`course.grader.selfcheck`: the student edition's visible-tests-only check;
  :mod:`course.grader.learner`: ``make test``'s pytest plugin;
  :mod:`course.grader.validate`: the lab's Validate answer.
- :mod:`course.grader.conform`: nbgrader's group-stopping accidents put right;
  :mod:`course.grader.flags`: the static flagger ("HELD FOR A PERSON").
- :mod:`course.grader.restore`: quiet test-cell restore;
  :mod:`course.grader.speedups`: nbgrader's checks and gradebook, faster.
- nbgrader's private hooks, one module each (what it works around, the version it was
  written against; tests/test_upstream_grader.py): :mod:`course.grader.nbgrader_alembic_heads`,
  :mod:`course.grader.nbgrader_schema_once`, :mod:`course.grader.nbgrader_failed_cells`.
"""
