"""``python -m course.grader``: see :mod:`course.grader.autograde`."""

import sys

from course.grader.autograde import main

sys.exit(main())
