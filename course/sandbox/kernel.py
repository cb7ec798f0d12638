"""The kernel a graded notebook runs in: ipykernel, with the grader's guards set first.

``python -m course.sandbox.kernel PLAN -f CONNECTION_FILE [ipykernel options]`` is what
:class:`course.sandbox.managers.GradingKernelManager` runs in place of
``-m ipykernel_launcher``. ``PLAN`` is JSON:

- ``limits``: :meth:`course.sandbox.limits.Limits.plan`, set on this process first
  (:func:`course.sandbox.limits.apply`);
- ``guard``: the name to publish :func:`course.sandbox.intact.install`'s check under, and
  ``secret_file``: a file holding the secret its answers are proved with; read and
  deleted here, before any cell runs;
- ``attempts`` (sandboxed kernels only): the write end of the grader's attempts pipe,
  and ``roots``: what exists inside the sandbox. :func:`log_attempts` then writes one
  line to the pipe for every attempt to reach a path elsewhere (open, list, glob, stat,
  ``is_dir``, a database, a change) and for every write outside the scratch folder and
  the private ``/tmp``. The grader owns the pipe's other end: a notebook cannot take
  back a line once written. Code that bypasses Python (ctypes, a subprocess) is still
  held by the sandbox's walls but goes unlogged.

It imports nothing heavy before ipykernel: it runs once per graded notebook.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys

WRITES = ("os.mkdir", "os.remove", "os.rename", "os.rmdir", "os.symlink", "os.link",
          "os.truncate", "os.chmod", "os.chown", "os.utime", "shutil.rmtree")
LISTS = ("os.listdir", "os.scandir", "glob.glob", "os.chdir")
LOOKS = ("os.stat", "os.lstat", "os.access")
MAX_LINES = 200
PRIVATE = ("/tmp/", "/dev/shm/")
# Modules that only pass a path on: the caller that matters is the one before them.
HELPERS = frozenset({"os", "posixpath", "genericpath", "pathlib", "glob", "fnmatch",
                     "shutil", "stat"})


def _library_probe(libraries: tuple[str, ...]) -> bool:
    """Whether the look-up being made comes from installed code (the system, the
    virtualenv, the ``course`` package: a library probing for an optional file, such as
    ``pkgutil`` looking for ``*.pkg`` files along ``sys.path`` or matplotlib for a source
    checkout) rather than from the notebook's own code (its cells, or files it wrote)."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or frame.f_globals.get("__name__") in HELPERS):
        frame = frame.f_back
    if frame is None:
        return True
    name = frame.f_code.co_filename
    return name.startswith("<frozen ") or name.startswith(libraries)


def _path(value: object) -> str | None:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return os.path.normpath(os.path.abspath(value)) if isinstance(value, str) else None


def _parents(path: str) -> list[str]:
    parts = path.rstrip("/").split("/")
    return ["/".join(parts[:i]) or "/" for i in range(1, len(parts))]


def log_attempts(roots: list[str], writable: list[str], pipe: str) -> None:
    """Report to ``pipe`` every access outside ``roots`` and every write outside
    ``writable`` (an audit hook, plus wrappers of ``os.stat``, ``os.lstat`` and
    ``os.access``, which raise no audit event)."""
    fd = os.open(pipe, os.O_WRONLY | os.O_CLOEXEC)
    inside = tuple(r.rstrip("/") + "/" for r in roots if r != "/")
    exact = frozenset(r.rstrip("/") or "/" for r in roots)
    may_write = tuple(w.rstrip("/") + "/" for w in writable)
    # The folders above what is inside exist too (empty but for the way down): looking one
    # up (as resolving a path does) is no attempt; listing one is.
    above = frozenset(str(parent) for r in roots for parent in _parents(r))
    # installed code: what the sandbox binds read-only (the system, the environment, the
    # package), not the scratch folder nor what exists inside only. A root under a writable
    # memory file system (a clone in /tmp: the sandbox's /tmp is its own, the clone is bound
    # read-only over it) is installed code too: only writable roots themselves are not.
    writable_roots = tuple(w for w in may_write if w.rstrip("/") in exact)
    libraries = tuple(dict.fromkeys(
        r.rstrip("/") + "/" for r in roots if r != "/" and not (r.rstrip("/") + "/").startswith(
            (*writable_roots, "/proc/", "/dev/", "/run/grading/"))))
    said: set[str] = set()

    def say(line: str) -> None:
        if line not in said and len(said) < MAX_LINES:
            said.add(line)
            with contextlib.suppress(OSError):
                os.write(fd, (line[:400].replace("\n", " ") + "\n").encode())

    real_lstat = os.lstat

    def missing(path: str) -> bool:
        try:
            real_lstat(path)
        except OSError:
            return True
        return False

    def note(event: str, path: str, writing: bool) -> None:
        allowed = path in exact or path.startswith(inside)
        if allowed or (event in LOOKS and path in above):
            outside = False
        elif path.startswith(PRIVATE):  # the sandbox's own /tmp: what is not there is
            outside = not writing and missing(path)  # someone else's
        else:
            outside = True
        if writing and not (path + "/").startswith(may_write) and path != "/dev/null":
            say(f"tried to write {path}" + (" (outside the sandbox)" if outside else
                                            " (outside its scratch folder)"))
        elif outside and not (event in LOOKS and _library_probe(libraries)):
            verb = ("list" if event in LISTS else "look up" if event in LOOKS
                    else "open the database" if event == "sqlite3.connect" else "read")
            say(f"tried to {verb} {path} (outside the sandbox)")

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path = _path(args[0]) if args else None
            mode = args[1] if len(args) > 1 else "r"
            flags = args[2] if len(args) > 2 else 0
            writing = (isinstance(mode, str) and any(m in mode for m in "wax+")) or (
                isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR)))
        elif event in LISTS or event in WRITES or event == "sqlite3.connect":
            path = _path(args[0]) if args else None
            writing = event in WRITES
        else:
            return
        if path is not None:
            note(event, path, writing)

    for name, event in (("stat", "os.stat"), ("lstat", "os.lstat"), ("access", "os.access")):
        real = getattr(os, name)

        def looked(path, *args, _real=real, _event=event, **kwargs):
            where = _path(path)
            if where is not None:
                note(_event, where, False)
            return _real(path, *args, **kwargs)

        setattr(os, name, functools.update_wrapper(looked, real))
    sys.addaudithook(hook)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    plan = json.loads(args[0])
    from course.sandbox.limits import apply

    apply(plan.get("limits", {}))  # before anything the notebook runs: it inherits them
    with open(plan["secret_file"]) as f:
        secret = f.read().strip()
    os.unlink(plan["secret_file"])
    if plan.get("attempts"):
        # the package and the virtualenv are read-only here: no bytecode cache written
        # into them (an honest import is no attempt); PYTHONDONTWRITEBYTECODE tells the
        # interpreters the notebook starts the same
        sys.dont_write_bytecode = True
        log_attempts(plan["roots"], plan["writable"], plan["attempts"])
        # In a PID namespace the parent is the sandbox's init (pid 1), which ipykernel's
        # parent poller takes for "the grader died"; bubblewrap's --die-with-parent does
        # that job instead (1, not unset: unset, ipykernel prints a note for a terminal).
        # ipykernel 7.4.0 reads it into IPKernelApp.parent_handle when it is imported, and
        # its init_poller skips 1: tests/test_upstream_sandbox.py checks both.
        os.environ["JPY_PARENT_PID"] = "1"
    sys.argv = [sys.argv[0], *args[1:]]
    from ipykernel.kernelapp import IPKernelApp

    from course.sandbox.intact import install
    from course.sandbox.ipykernel_stream_write import cap_output

    app = IPKernelApp.instance()
    app.initialize()
    cap_output(plan.get("limits", {}).get("output", 0), app.shell)
    install(app.shell, plan["guard"], secret)
    app.start()


if __name__ == "__main__":
    main()
