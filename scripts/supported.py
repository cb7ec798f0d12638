"""``make setup`` / ``lab`` / ``test`` / ``check``, first: can this Python on this system run
the course? Prints nothing and exits 0 if it can; otherwise one line saying what to do, exit 2.

Run with the Python a learner gave (``make setup PYTHON=...``), before any version check
passed, so it loads ``course/base/platform.py`` by its path: importing the ``course``
package would need a supported Python already.
"""

import importlib.util
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "course" / "base" / "platform.py"


def main() -> int:
    spec = importlib.util.spec_from_file_location("course_platform", HERE)
    platform = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(platform)
    except SyntaxError:  # a Python too old to read it (3.6 and older)
        oldest = re.search(r"^OLDEST = \((\d+), (\d+)\)", HERE.read_text(), re.M).groups()
        problem = "Python {}.{} is older than the course supports: use Python {}.{} or newer" \
            .format(*sys.version_info[:2], *oldest)
    else:
        problem = platform.python_problem() or platform.posix_problem()
    if problem:
        print("make: " + problem, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
