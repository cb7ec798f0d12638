"""``python -m course.grader``: see :mod:`course.grader.cli`."""

import sys

from course.grader.cli import main

sys.exit(main())
