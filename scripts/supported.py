"""``make setup`` / ``lab`` / ``test`` / ``check``, first: can this Python on this system run
the course? Prints nothing and exits 0 if it can; otherwise one line saying what to do, exit 2.

Run with the Python a learner gave (``make setup PYTHON=...``), before any version check
passed, so it must read under any Python, 2.7 included (no annotations, no f-strings), and
reads the supported range from ``course/base/platform.py`` as text; it loads that module
(for its system check) only once the version is known to read it.

Where the Python is out of range, the line names a Python that runs here and is in range
(on ``PATH`` as ``python3.X``, or pyenv's), so the command it suggests works as typed.

``--missing NAME`` (run by any ``python3``): the Python the learner named does not run here
(missing, or a pyenv shim for a version not selected); say so, with the suggestion.

``--asked PYTHON``: the Python named on make's command line while a set-up environment
already exists (run by the environment's Python). If the two differ, say that the
environment keeps its own until ``make clean``, instead of make's "Nothing to be done".
"""

# It must parse under Python 2.7: no f-strings, no starred tuples, hence "%" formatting.
# ruff: noqa: UP031, RUF005

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORM = os.path.join(ROOT, "course", "base", "platform.py")


def supported_range():
    """(OLDEST, NEWEST) as read from platform.py's text, each a (major, minor) tuple."""
    with open(PLATFORM) as source:
        text = source.read()
    found = [re.search(r"^%s = \((\d+), (\d+)\)" % name, text, re.M).groups()
             for name in ("OLDEST", "NEWEST")]
    return [tuple(int(part) for part in pair) for pair in found]


def version_of(python):
    """(major, minor) of the interpreter ``python`` (a name or a path), or None if it does
    not run (missing, or a pyenv shim for a version not selected)."""
    try:
        with open(os.devnull, "w") as quiet:
            out = subprocess.check_output(
                [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                stderr=quiet)
    except (OSError, subprocess.CalledProcessError):
        return None
    parts = out.decode().split()
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 else None


def candidates(oldest, newest):
    """Pythons that may be in range: ``python3.X`` on PATH (not pyenv's shims), then pyenv's."""
    minors = range(newest[1], oldest[1] - 1, -1)
    for minor in minors:
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            path = os.path.join(folder, "python3.%d" % minor)
            if os.access(path, os.X_OK) and "shims" not in folder:
                yield "python3.%d" % minor
                break
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    versions = os.path.join(pyenv, "versions")
    if os.path.isdir(versions):
        for name in sorted(os.listdir(versions), reverse=True):
            yield os.path.join(versions, name, "bin", "python3")


def suggestion(oldest, newest):
    """The end of the refusal: a command that works here (the newest Python in range it
    finds), or where to get a Python."""
    found = []
    for python in candidates(oldest, newest):
        version = version_of(python)
        if version is not None and oldest <= version <= newest:
            found.append((version, python))
    if found:
        return "; this machine has one: make setup PYTHON=%s" % max(found)[1]
    return ("; install one (python.org, Homebrew, your system's packages or pyenv) and name "
            "it, e.g. make setup PYTHON=python3.%d" % newest[1])


def version_problem(here, oldest, newest):
    """One line saying why Python ``here`` cannot run the course, or None."""
    if oldest <= here <= newest:
        return None
    why = ("is older than the course supports" if here < oldest
           else "is newer than the course's pinned packages have wheels for")
    return "Python %d.%d %s: use Python %d.%d to %d.%d%s" % (
        here + (why,) + oldest + newest + (suggestion(oldest, newest),))


def system_problem():
    """platform.posix_problem(), loaded by path (importing ``course`` needs its packages)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("course_platform", PLATFORM)
    platform = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(platform)
    return platform.posix_problem()


def asked_problem(asked):
    """The set-up environment runs this Python; ``asked`` was named: one line if they differ."""
    here = tuple(sys.version_info[:2])
    wanted = version_of(asked)
    if wanted is None or wanted == here:
        return None
    venv = os.path.relpath(sys.prefix) if sys.prefix.startswith(ROOT) else sys.prefix
    return ("%s/ was set up with Python %d.%d, not %s (Python %d.%d): run make clean, then "
            "make setup PYTHON=%s" % ((venv,) + here + (asked,) + wanted + (asked,)))


def main(argv):
    oldest, newest = supported_range()
    if len(argv) == 2 and argv[0] == "--missing":
        sys.stderr.write("make: %s does not run here: use Python %d.%d to %d.%d%s\n" % (
            (argv[1],) + oldest + newest + (suggestion(oldest, newest),)))
        return 2
    problem = version_problem(tuple(sys.version_info[:2]), oldest, newest)
    if problem is None and len(argv) == 2 and argv[0] == "--asked":
        problem = asked_problem(argv[1])
    if problem is None:
        problem = system_problem()
    if problem:
        sys.stderr.write("make: " + problem + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
