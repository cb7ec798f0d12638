"""``python -m course.grading``: see :mod:`course.grading.autograde`."""

import sys

from course.grading.autograde import main

sys.exit(main())
