"""The term: a class graded, fed back and exported, week after week.

May import: every floor up to :mod:`course.sandbox`.

- :mod:`course.term.instructor`: the instructor's steps and their CLI (``python -m
  course.term.instructor``: release and register, exchange, collect, feedback, return,
  export, roster, due dates, extensions), on :mod:`course.term.coursedir` (nbgrader run
  for this repository, a week released and registered, the exchange) and
  :mod:`course.term.grades` (the gradebook as ``grades/weekN.csv`` and the Canvas CSV).
- :mod:`course.term.classgrade`: ``make grade``, a class graded in parallel groups, each
  in a worker (:mod:`course.term.worker`), merged into one gradebook by
  :mod:`course.term.merge` (one transaction per student, hand grades of unchanged answers
  kept), said student by student (:mod:`course.term.report`); :mod:`course.term.late`:
  due dates and the late penalty in nbgrader's terms; :mod:`course.term.lms`: an LMS's
  download.
- :mod:`course.term.feedback`: feedback without hidden tests or grading paths;
  :mod:`course.term.rubric`: rubrics for graders;
  :mod:`course.term.edition`: the student edition.
- :mod:`course.term.hub`: the class JupyterHub's own environment (``make hub-deps``;
  its configuration is ``scripts/hub/jupyterhub_config.py``).
- Overrides of libraries' private hooks, one module each, named after what they work
  around (tested in ``tests/test_upstream_term.py``):
  :mod:`course.term.nbgrader_gradebook_commits` (one transaction around nbgrader's
  Gradebook) and :mod:`course.term.nbconvert_soup_pass` (feedback HTML without
  nbconvert's BeautifulSoup pass).

Imports inside the room run one way (lazy ones included): instructor -> classgrade ->
report -> grades -> merge -> worker -> coursedir, with lms beside classgrade and late,
rubric and the hook modules below; ``tests/test_term_room.py`` checks there is no circle.
"""
