"""Delegating to the package's reference scores nothing: one rule for every week.

The ``course`` package holds the reference implementations that later weeks build on
(week 1's ``parse``, week 5's ``guarded``, week 6's ``select_recovery``...), and the
student edition ships it. An exercise whose answer also exists there declares that
reference in its week's declaration (``references`` in ``solutions/weekN/week.toml``,
:mod:`course.grader.declaration`). While the exercise's test cells run, :func:`watching`
records every call of a reference whose caller is code of the notebook's answer cells,
by any name it was reached through (an import under another name, an attribute of a
module, an assignment), in the kernel, its threads and the processes it forks; and a
reference that the exercise's own answer cells bind to one of their names (``from
course.cloudwave.nodes import email_key``, ``first_changed_step = model_changed_at``),
which the tests then call directly. The
grader (:class:`course.sandbox.guard.TestGuard`) then fails those test cells with
:func:`message`, so the exercise scores what the student's own code earns.

The watch is a profile function (``sys.setprofile``); it costs a test cell about what
:func:`course.grading.checks.course_code_run` costs, and only exercises that declare a
reference pay it. It imports nothing heavy: it runs inside graded kernels.
"""

from __future__ import annotations

import contextlib
import importlib
import linecache
import os
import sys
import threading
from collections.abc import Iterable, Iterator

COURSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def message(called: Iterable[str]) -> str:
    """What a student whose answer called (or is) ``called`` is told."""
    names = ", ".join(sorted(called))
    return (f"this exercise is to be your own code, but your answer calls {names}, the "
            "course's reference implementation (or imports it as the answer); write it "
            "yourself")


def bound_names(sources: Iterable[str]) -> set[str]:
    """The names the top level of ``sources`` binds: defs, classes, imports, assignments
    (a source that is not plain Python binds none)."""
    import ast

    names: set[str] = set()
    for source in sources:
        try:
            body = ast.parse(source).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def bound_references(codes: dict, own: Iterable[str], namespace: dict) -> set[str]:
    """The references (``codes``: code object -> name) that a name bound by the
    exercise's own answer cells (``own``) holds in ``namespace``, unwrapped."""
    import inspect

    found = set()
    for name in bound_names(own):
        value = namespace.get(name)
        if callable(value):
            with contextlib.suppress(Exception):
                value = inspect.unwrap(value)
            code = getattr(value, "__code__", None)
            if code in codes:
                found.add(codes[code])
    return found


def _resolve(name: str):
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


@contextlib.contextmanager
def watching(names: Iterable[str], answers: Iterable[str], own: Iterable[str] = (),
             namespace: dict | None = None) -> Iterator[set[str]]:
    """Record, in the set this yields, each reference of ``names`` that code of an answer
    cell (its source is one of ``answers``) calls while the block runs, in this process,
    its threads and its forked children (which report through a pipe, read at the end);
    and, from the start, each one that a name bound by ``own`` holds in ``namespace``.

    Args:
        names: references, ``module.function``; one that does not exist is an error.
        answers: the source of every answer cell of the notebook, as it ran.
        own: the source of the exercise's own answer cells.
        namespace: the notebook's global names (the kernel's ``user_ns``).
    """
    codes = {_resolve(name).__code__: name for name in names}
    texts = {text.strip() for text in answers if text.strip()}
    verdict: dict[str, bool] = {}  # filename -> an answer cell's code?
    called: set[str] = bound_references(codes, own, namespace) if namespace else set()
    read, write = os.pipe()
    os.set_blocking(read, False)
    parent = os.getpid()

    def is_answer(filename: str) -> bool:
        if filename not in verdict:
            verdict[filename] = not filename.startswith(COURSE_DIR) and (
                "".join(linecache.getlines(filename)).strip() in texts)
        return verdict[filename]

    def watch(frame, event, arg) -> None:
        if event != "call" or frame.f_code not in codes:
            return
        caller = frame.f_back
        if caller is not None and is_answer(caller.f_code.co_filename):
            name = codes[frame.f_code]
            if os.getpid() == parent:
                called.add(name)
            else:
                with contextlib.suppress(OSError):
                    os.write(write, (name + "\n").encode())

    before, before_threads = sys.getprofile(), threading.getprofile()
    sys.setprofile(watch)
    threading.setprofile(watch)
    try:
        yield called
    finally:
        sys.setprofile(before)
        threading.setprofile(before_threads)
        os.close(write)
        with contextlib.suppress(OSError):
            while chunk := os.read(read, 65536):
                called.update(line for line in chunk.decode().split() if line in
                              codes.values())
        os.close(read)
