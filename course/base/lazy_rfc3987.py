"""Make ``import jsonschema`` cheap: load ``rfc3987_syntax`` when an IRI is first checked.

Why this exists. ``jsonschema`` (4.26) registers its ``iri`` and ``iri-reference``
format checks at import time with ``from rfc3987_syntax import is_valid_syntax``
whenever the GPL ``rfc3987`` package is absent, and ``rfc3987_syntax`` builds a Lark
Earley parser for the whole RFC 3987 grammar as it is imported: about 2 s of CPU in
every process that imports ``nbformat`` (which imports ``jsonschema``), so in every
nbgrader command, ``make check``, every pytest worker and every test subprocess. No
Jupyter or nbgrader schema uses the ``iri`` formats; ``rfc3987-syntax`` is only
installed because ``jupyter-events`` asks for ``jsonschema[format-nongpl]``. Upstream
declined to make the import lazy (jsonschema issue #1428, PR #1521), so the course
does it from the outside, without changing what any check answers.

Written against: jsonschema 4.26.0, rfc3987-syntax 1.1.0.
Upstream: jsonschema issue #1428 (declined), PR #1521.

What :func:`install` does. It puts a small stand-in module under the name
``rfc3987_syntax`` in ``sys.modules``, so jsonschema's import finds it and registers
the same two checks as before. The stand-in's :func:`is_valid_syntax` imports the real
package on its first call, takes the stand-in out of ``sys.modules`` and forwards
every call to the real function; any other attribute of the stand-in does the same.
An invalid IRI is still rejected and a valid one accepted, just ~2 s later, the first
time a schema actually asks. The real package's import is the only thing deferred.

It promises:

- it never changes behaviour: if ``rfc3987_syntax`` is not installed, or is already
  imported, or the GPL ``rfc3987`` is installed (jsonschema then uses that instead),
  :func:`install` does nothing and returns False;
- it is idempotent and cheap (no import of jsonschema, lark or the real package);
- it is thread safe: two threads validating an IRI at once load the real package once.

Where it is installed. ``make setup`` writes a one-line ``.pth`` file into the
virtualenv's ``site-packages`` (:func:`write_pth`, ``python -m course.base.lazy_rfc3987
install-pth``): Python's ``site`` module runs it at every interpreter start-up, so
nbgrader's own commands, pytest workers and test subprocesses all benefit. The line
never fails loudly (a checkout without this module simply gets the slow import). The
``course`` package calls :func:`install` as it is imported (before any floor imports
nbformat), so its grading entry points are fast in an environment without the ``.pth``
file too.
"""

from __future__ import annotations

import _thread
import importlib
import importlib.util
import sys
import types
from pathlib import Path

NAME = "rfc3987_syntax"
PTH_NAME = "crash_resume_course_lazy_rfc3987.pth"
# One line (``site`` executes lines that start with "import"); silent if the course is
# not importable, so an old checkout on PYTHONPATH never prints an error at start-up.
PTH_LINE = ("import sys; exec('try:\\n from course.base.lazy_rfc3987 import install\\n"
            "except Exception:\\n pass\\nelse:\\n install()')\n")

_lock = _thread.allocate_lock()
_stand_in: types.ModuleType | None = None


def install() -> bool:
    """Put the lazy stand-in in ``sys.modules``; True if it is in place (now or from an
    earlier call), False if the real module (or nothing) is used (module docstring)."""
    global _stand_in
    with _lock:
        if NAME in sys.modules:
            return sys.modules[NAME] is _stand_in and _stand_in is not None
        if "rfc3987" in sys.modules or _findable("rfc3987"):
            return False  # jsonschema uses the GPL package then; nothing to defer
        spec = _findable(NAME)
        if spec is None:
            return False  # not installed: jsonschema skips the iri checks, as it would
        module = types.ModuleType(NAME, "Lazy stand-in for rfc3987_syntax "
                                        "(course.base.lazy_rfc3987): loads it on first use.")
        module.__spec__ = spec  # importlib.util.find_spec(NAME) answers as for the real one
        module.__path__ = list(spec.submodule_search_locations or [])  # submodules import
        module.is_valid_syntax = is_valid_syntax
        module.__getattr__ = _attribute  # PEP 562: anything else comes from the real module
        _stand_in = module
        sys.modules[NAME] = module
        return True


def is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``: imports the real package on first call."""
    return real_module().is_valid_syntax(term, value)


def real_module() -> types.ModuleType:
    """The real ``rfc3987_syntax`` (imported now if only the stand-in is loaded)."""
    module = sys.modules.get(NAME)
    if module is not None and module is not _stand_in:
        return module
    with _lock:
        module = sys.modules.get(NAME)
        if module is _stand_in:
            del sys.modules[NAME]
            try:
                module = importlib.import_module(NAME)
            except BaseException:
                sys.modules[NAME] = _stand_in
                raise
        elif module is None:
            module = importlib.import_module(NAME)
        return module


def _attribute(name: str):
    if name == "__all__":  # ``from rfc3987_syntax import *`` gets the real names
        real = real_module()
        return getattr(real, "__all__", [n for n in vars(real) if not n.startswith("_")])
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)  # copy, pickle and inspect probe these: stay lazy
    return getattr(real_module(), name)


def _findable(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


# ------------------------------------------------------------ the start-up hook
def site_packages() -> Path:
    """This interpreter's ``site-packages`` (the virtualenv's, when run from one)."""
    import sysconfig

    return Path(sysconfig.get_paths()["purelib"])


def write_pth(folder: Path | None = None) -> Path:
    """Write the start-up ``.pth`` file into ``folder`` (default: :func:`site_packages`);
    rewrites it only if its content differs, so running it again costs nothing."""
    path = Path(folder or site_packages()) / PTH_NAME
    if not path.is_file() or path.read_text() != PTH_LINE:
        path.write_text(PTH_LINE)
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["install-pth"]:
        folder = Path(args[1]) if len(args) > 1 else None
        print(f"lazy rfc3987_syntax import at start-up: {write_pth(folder)}")
        return 0
    print("usage: python -m course.base.lazy_rfc3987 install-pth [SITE_PACKAGES]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
