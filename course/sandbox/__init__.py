"""The sandbox: a graded notebook's kernel, walled in and watched.

May import: every floor up to :mod:`course.grader` (it reads a week's declaration and
words its findings as the grader does). Nothing here knows a class or a gradebook.

- :mod:`course.sandbox.sandbox`: the notebook time budget, the test guard and the
  sandboxed kernel; :mod:`course.sandbox.jail`: the allow-list (bubblewrap);
  :mod:`course.sandbox.kernel`: the graded kernel's entry point (attempts pipe);
  :mod:`course.sandbox.intact`: the kernel's hooks put back before every test;
  :mod:`course.sandbox.limits`: memory, processes, output and disk;
  :mod:`course.sandbox.references`: the watch on each exercise's reference implementation.
"""

# Before anything here imports nbformat (and so jsonschema): ~2 s saved per process where
# the virtualenv lacks make setup's .pth line (course.base.lazy_rfc3987).
from course.base.lazy_rfc3987 import install as _lazy_rfc3987

_lazy_rfc3987()
