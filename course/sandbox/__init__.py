"""The sandbox: a graded notebook's kernel, walled in and watched.

May import: every floor up to :mod:`course.grader` (it reads a week's declaration and
words its findings as the grader does). Nothing here knows a class or a gradebook.

The grader's side:

- :mod:`course.sandbox.execute`: ``GradingExecute``, nbgrader's Execute step as the course
  grades with it (named in ``nbgrader_config.py``), which brings together
  :mod:`course.sandbox.budget` (the notebook time budget),
  :mod:`course.sandbox.output_cap` (the output limit, grader side),
  :mod:`course.sandbox.guard` (the test guard, grader side) and
  :mod:`course.sandbox.managers` (the two kernel managers: guarded; guarded and walled);
- :mod:`course.sandbox.jail`: the walls (whether bubblewrap works here, its command line);
  :mod:`course.sandbox.environment`: the kernel's allow-listed environment;
  :mod:`course.sandbox.attempts`: the grader's end of the attempts pipe;
  :mod:`course.sandbox.limits`: memory, processes, output, disk, CPU time;
  :mod:`course.sandbox.notes`: the student's row.

Inside the graded kernel:

- :mod:`course.sandbox.kernel`: its entry point (limits, attempts log, guard);
  :mod:`course.sandbox.intact`: its hooks put back before every test;
  :mod:`course.sandbox.references`: the watch on each exercise's reference implementation.

Each override of a library's private hook lives in a module of its own, named after the
library and what it works around, with its test in ``tests/test_upstream_sandbox.py``:
:mod:`course.sandbox.jupyter_client_kernel_launch`,
:mod:`course.sandbox.nbclient_cell_timeout`, :mod:`course.sandbox.ipykernel_stream_write`
(and :mod:`course.sandbox.intact`, whose job is to put IPython's own attributes back).
"""
