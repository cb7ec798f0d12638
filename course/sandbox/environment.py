"""A sandboxed kernel's environment: an allow-list of the grader's variables, and a home
of its own.

What a graded kernel may inherit from the grader's environment is an allow-list
(:data:`KERNEL_ENV`), like its file system (:mod:`course.sandbox.jail`). Everything else
(a ``make`` variable such as ``DB_URL=postgresql://user:pass@...``, an API key, the hub's
token, ``MAKEFLAGS``) stays out: a notebook could print it into the feedback its student
gets back. ``HOME`` and the temporary folders point into the kernel's scratch folder,
which starts with the grader's matplotlib font lists (:func:`matplotlib_font_lists`).
"""

from __future__ import annotations

import os
from pathlib import Path

KERNEL_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONNOUSERSITE",
              "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "VIRTUAL_ENV",
              "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "COURSE_PG_USER", "COURSE_PG_BINDIR")


def sandbox_env(env, scratch: Path) -> dict[str, str]:
    """The kernel's environment: only :data:`KERNEL_ENV` (and ``LC_*``) of the grader's,
    with ``HOME`` and temporary folders in ``scratch``."""
    kept = {key: value for key, value in env.items()
            if key in KERNEL_ENV or key.startswith("LC_")}
    return {**kept, "HOME": str(scratch), "TMPDIR": str(scratch / "tmp"),
            "MPLCONFIGDIR": str(scratch / "tmp"), "IPYTHONDIR": str(scratch / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"), "PWD": str(scratch),
            "PYTHONDONTWRITEBYTECODE": "1"}


def matplotlib_font_lists() -> list[str]:
    """The grader's matplotlib font list cache (``fontlist-v*.json``), if there is one.

    A sandboxed kernel gets a new, empty ``MPLCONFIGDIR``, so its first matplotlib import
    would rebuild the list by scanning every font on the system (a quarter of a second
    here, per student); the manager copies these files in first. They name the system's
    font files, which the kernel can read anyway; matplotlib rebuilds a list that does
    not match its version. Where matplotlib looks (``MPLCONFIGDIR``, else the XDG cache
    folder), without importing it."""
    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    return sorted(str(p) for p in Path(folder).glob("fontlist-v*.json"))
