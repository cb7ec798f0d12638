"""Tests a notebook cannot neuter: the kernel's hooks put back before every test cell.

nbgrader runs a notebook's test cells in the student's own kernel, after the student's
code. Code there can rewire the kernel so that a failing test looks like a passing one:
an IPython AST or input transformer that wraps every later cell in
``try/except BaseException``, ``sys.stderr`` swapped for a buffer, a custom exception
handler, a trace function that skips lines, a replaced builtin. This module is the
kernel's half of the guard (the grader's half is in :mod:`course.sandbox.guard`):

- :func:`install` (called by :mod:`course.sandbox.kernel` before any cell runs) takes a
  snapshot of every such hook as ipykernel set it up, and publishes :func:`check` under
  a name of the grader's choosing, answering with a proof made from a secret the grader
  handed over in a file the kernel deleted before any cell ran.
- The grader calls it (through a ``user_expressions`` request, which no input or AST
  transformer sees) before and after every test cell: it puts every hook back, names
  those that had changed, and says whether the test cell ran to its last line (the
  grader appends a line that sets a marker) and whether the notebook's answers called
  the exercise's reference implementation meanwhile (:mod:`course.sandbox.references`).

What it cannot stop: code written against this module itself, in the same process: the
secret and the snapshot are in the check's closure, so a notebook can read the secret
and forge answers, or change the snapshot; it can also wrap what this module does not
put back (the kernel's ``do_execute``, its session's ``send``). The grader refuses an
answer that says a word :func:`is_finding` does not know, and the static flagger
(:mod:`course.grader.flags`) holds every notebook that reaches for these things for a
person; it does not make them impossible.

Library attributes it assigns: the hooks it puts back are IPython's and ipykernel's own
attributes of the kernel's shell (the lists :data:`SHELL_LISTS` and :data:`MANAGER_LISTS`
name, the objects of :data:`SHELL_ATTRS`, the methods of :data:`METHODS`, private
``_showtraceback`` included, on the shell and on every class of its MRO, and
``shell.events.callbacks``). A name that upstream renames is skipped silently by the
snapshot, so each must still exist: tests/test_upstream_sandbox.py checks them in a
live kernel.

Written against: ipykernel 7.4.0, IPython 9.18.1.
Upstream: no upstream issue; the hooks are private.
"""

from __future__ import annotations

import builtins
import hashlib
import sys
from typing import Any

STREAMS = ("stdout", "stderr", "excepthook", "displayhook", "breakpointhook")
SHELL_LISTS = ("ast_transformers", "input_transformers_cleanup", "input_transformers_post")
MANAGER_LISTS = ("cleanup_transforms", "line_transforms", "token_transformers")
SHELL_ATTRS = ("displayhook", "display_pub", "compile", "custom_exceptions", "CustomTB",
               "InteractiveTB", "SyntaxTB")
METHODS = ("run_cell", "run_cell_async", "run_ast_nodes", "run_code", "transform_cell",
           "transform_ast", "showtraceback", "_showtraceback", "showsyntaxerror",
           "should_run_async", "user_expressions")


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]{0,60}"


def is_finding(name: str) -> bool:
    """Whether ``name`` is one of the names :meth:`_Snapshot.restore` can report: the
    grader accepts no other word from the kernel's check (:func:`course.sandbox.guard.
    trusted`)."""
    import re

    either = "|".join
    pattern = (rf"sys\.settrace|sys\.(?:{either(STREAMS)})|builtins\.{_IDENTIFIER}"
               rf"|{either(SHELL_LISTS + MANAGER_LISTS)}|shell\.(?:{either(SHELL_ATTRS + METHODS)})"
               rf"|events\.{_IDENTIFIER}|{_IDENTIFIER}\.(?:{either(METHODS)})")
    return re.fullmatch(pattern, name) is not None


class _Snapshot:
    """The hooks as ipykernel set them up (values, and copies of the lists)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.sys = {name: getattr(sys, name) for name in STREAMS}
        self.builtins = dict(vars(builtins))
        self.lists = {name: list(getattr(shell, name, [])) for name in SHELL_LISTS}
        manager = getattr(shell, "input_transformer_manager", None)
        self.manager = manager
        self.manager_lists = {name: list(getattr(manager, name, [])) for name in MANAGER_LISTS}
        self.attrs = {name: getattr(shell, name) for name in SHELL_ATTRS if hasattr(shell, name)}
        self.flags = shell.compile.flags
        self.events = {name: list(callbacks) for name, callbacks in shell.events.callbacks.items()}
        self.methods = {name: vars(shell)[name] for name in METHODS if name in vars(shell)}
        self.classes = {(cls, name): cls.__dict__[name] for cls in type(shell).__mro__
                        for name in METHODS if name in cls.__dict__}

    def restore(self) -> list[str]:
        """Put every hook back; the names of those that had changed."""
        shell, changed = self.shell, []
        if sys.gettrace() is not None or sys.getprofile() is not None:
            sys.settrace(None)
            sys.setprofile(None)
            changed.append("sys.settrace")
        for name, value in self.sys.items():
            if getattr(sys, name) is not value:
                setattr(sys, name, value)
                changed.append(f"sys.{name}")
        current = vars(builtins)
        for name, value in self.builtins.items():
            if current.get(name, _MISSING) is not value and name not in _IPYTHON_BUILTINS:
                current[name] = value
                changed.append(f"builtins.{name}")
        for owner, lists in ((shell, self.lists), (self.manager, self.manager_lists)):
            for name, value in lists.items():
                if list(getattr(owner, name, [])) != value:
                    setattr(owner, name, list(value))
                    changed.append(name)
        for name, value in self.attrs.items():
            if getattr(shell, name) is not value:
                setattr(shell, name, value)
                changed.append(f"shell.{name}")
        shell.compile.flags = self.flags  # a `from __future__` import: honest, not named
        for name, callbacks in shell.events.callbacks.items():
            kept = [c for c in callbacks if c in self.events.get(name, [])
                    or _is_library(c)]
            if kept != callbacks:
                callbacks[:] = kept
                changed.append(f"events.{name}")
        for name in METHODS:
            now, then = vars(shell).get(name, _MISSING), self.methods.get(name, _MISSING)
            if now is not then:
                if then is _MISSING:
                    delattr(shell, name)
                else:
                    setattr(shell, name, then)
                changed.append(f"shell.{name}")
        for (cls, name), value in self.classes.items():
            if cls.__dict__.get(name) is not value:
                setattr(cls, name, value)
                changed.append(f"{cls.__name__}.{name}")
        return changed


_MISSING = object()
# IPython puts these in builtins while a cell runs and takes them out after.
_IPYTHON_BUILTINS = frozenset({"get_ipython", "exit", "quit", "display", "__IPYTHON__",
                               "_", "__", "___"})


# Libraries that register IPython event callbacks of their own (matplotlib's inline
# backend does on the first pyplot import): kept, and not counted as rewiring.
_LIBRARIES = ("matplotlib_inline.", "matplotlib.", "ipykernel.", "IPython.", "ipywidgets.")


def _is_library(callback: Any) -> bool:
    """A callback a library registered: its ``__module__`` names one of :data:`_LIBRARIES`
    and its code comes from that module's own file (a notebook can set ``__module__`` on
    a function of its own, not move the function's code into the library's file)."""
    if not _module_of(callback).startswith(_LIBRARIES):
        return False
    function = getattr(callback, "__func__", callback)
    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    module = sys.modules.get(getattr(callback, "__module__", None) or "")
    return bool(filename) and filename == getattr(module, "__file__", None)


def _module_of(callback: Any) -> str:
    return (getattr(callback, "__module__", None) or "") + "."


def proof(secret: str, nonce: str, rewired: list[str], ran: bool | None,
          delegated: list[str]) -> str:
    """What :func:`check` answers to ``nonce`` with its findings: only a holder of
    ``secret`` can make it, and it no longer matches once a finding is changed."""
    found = f"{secret}:{nonce}:{rewired}:{ran}:{delegated}"
    return hashlib.sha256(found.encode()).hexdigest()


def install(shell: Any, name: str, secret: str) -> None:
    """Snapshot the kernel's hooks and publish the check as ``sys.<name>``.

    Args:
        shell: ipykernel's ``InteractiveShell``, set up, before any cell has run.
        name: where the grader will call the check (``sys.<name>(nonce, marker)``).
        secret: what proves an answer came from this check.
    """
    snapshot = _Snapshot(shell)
    user_ns = shell.user_ns
    watch: list = []  # the delegation watch of the test cell running, if any

    def check(nonce: str, marker: str | None = None,
              references: tuple[list[str], list[str], list[str]] | None = None) -> dict:
        delegated: list[str] = []
        if watch:  # the test cell is over: stop watching, before anything else runs
            block, called = watch.pop()
            block.__exit__(None, None, None)
            delegated = sorted(called)
        changed = snapshot.restore()
        ran = None if marker is None else user_ns.pop(marker, None) == nonce[:16]
        if references:  # before a test cell of an exercise that has a reference
            from course.sandbox.references import watching

            block = watching(*references, namespace=user_ns)
            watch.append((block, block.__enter__()))
        return {"proof": proof(secret, nonce, changed, ran, delegated), "rewired": changed,
                "ran": ran, "delegated": delegated}

    setattr(sys, name, check)
