"""The term: a class graded, fed back and exported, week after week.

May import: every floor up to :mod:`course.sandbox`.

- :mod:`course.term.instructor`: the instructor's steps (release and register,
  exchange, collect, feedback, return, export, roster, due dates);
  :mod:`course.term.classgrade`: ``make grade``, a class graded in parallel groups
  merged into one gradebook by :mod:`course.term.merge` (one transaction per student,
  hand grades of unchanged answers kept); :mod:`course.term.late`: due dates and the
  late penalty in nbgrader's terms; :mod:`course.term.lms`: an LMS's download.
- :mod:`course.term.feedback`: feedback without hidden tests or grading paths;
  :mod:`course.term.rubric`: rubrics for graders;
  :mod:`course.term.edition`: the student edition.
- :mod:`course.term.hub`: the class JupyterHub's own environment (``make hub-deps``;
  its configuration is ``scripts/hub/jupyterhub_config.py``).
"""

# Before anything here imports nbformat (and so jsonschema): ~2 s saved per process where
# the virtualenv lacks make setup's .pth line (course.base.lazy_rfc3987).
from course.base.lazy_rfc3987 import install as _lazy_rfc3987

_lazy_rfc3987()
