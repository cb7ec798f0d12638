"""A notebook function run in a brand-new Python process, to show what it depends on.

:func:`in_fresh_interpreter` returns what ``fn(*args)`` returns in a new interpreter with
its own hash seed; :func:`portable_source` is how ``fn`` travels (its source, the notebook
code it reads, imports for the rest); :class:`NotPortable` names what cannot travel.
Re-exported by :mod:`course.grading.checks`, where graded tests import it from.
"""

from __future__ import annotations

import ast
import builtins
import dis
import inspect
import json
import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any


class NotPortable(Exception):
    """A function uses something that a new process cannot get."""


# ---------------------------------------------------------------- fresh process
def portable_source(fn: Callable[..., Any]) -> str:
    """Python source that defines ``fn`` (under its own name) in a new interpreter.

    Functions travel as their source. A plain value the function reads (a
    string, a number, a dict of them) travels as the notebook statement that
    made it when the notebook's input history has one (``SALT = uuid4().hex``
    runs again, so a per-process salt comes out different), else as its value.
    """
    lines: _Lines = _Lines(getattr(fn, "__globals__", {}))
    _ship(fn.__name__, fn, fn.__module__, lines, set())
    return "\n".join(lines)


class _Lines(list):
    """The lines being shipped, and the namespace (notebook globals) they come from."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        super().__init__()
        self.namespace = namespace


def _namespace_of(lines: list[str]) -> dict[str, Any]:
    return getattr(lines, "namespace", {})


def _defining_statement(name: str, namespace: dict[str, Any]) -> str | None:
    """The source of the last notebook statement ``name = ...`` (IPython's input history,
    ``In``), or ``None`` outside IPython or when ``name`` was not bound that simple way."""
    history = namespace.get("In")
    if not isinstance(history, list):
        return None
    for cell in reversed(history):
        if not isinstance(cell, str) or name not in cell:
            continue
        try:
            tree = ast.parse(cell)
        except SyntaxError:
            continue
        for statement in reversed(tree.body):
            if name in _names_bound(statement):
                if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value:
                    return ast.get_source_segment(cell, statement)
                return None  # bound some other way (a loop, +=): ship the value instead
    return None


def _names_bound(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    elif isinstance(statement, ast.For | ast.With):
        return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)}
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _names_loaded(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def in_fresh_interpreter(fn: Callable[..., Any], *args: Any, hash_seed: int = 1,
                         timeout_s: float = 60) -> Any:
    """``fn(*args)`` computed in a new Python process (arguments and result as JSON), after
    running there again the notebook code ``fn`` reads (see :func:`portable_source`)."""
    script = "\n".join([
        portable_source(fn),
        "import json as _json, sys as _sys",
        f"_sys.stdout.write(_json.dumps({fn.__name__}(*_json.loads(_sys.argv[1]))))",
    ])
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    try:
        done = subprocess.run([sys.executable, "-c", script, json.dumps(args)], env=env,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"{fn.__name__} did not finish within {timeout_s:g} s in a new process") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no error text)"])[-1]
        raise AssertionError(f"{fn.__name__} failed in a new Python process: {last}")
    return json.loads(done.stdout)


def _ship(name: str, value: Any, home: str, lines: list[str], seen: set[str]) -> None:
    if name in seen:
        return
    seen.add(name)
    if inspect.ismodule(value):
        lines.insert(0, f"import {value.__name__} as {name}")
        return
    module = getattr(value, "__module__", None)
    if (inspect.isfunction(value) or inspect.isclass(value)) and module != home \
            and module and module != "__main__":
        lines.insert(0, f"from {module} import {value.__qualname__} as {name}")
        return
    if inspect.isfunction(value):
        for used in sorted(_globals_used(value.__code__)):
            if used in value.__globals__:
                _ship(used, value.__globals__[used], home, lines, seen)
            elif not hasattr(builtins, used):
                raise NotPortable(f"{value.__name__} uses {used!r}, which is not defined")
        try:
            source = textwrap.dedent(inspect.getsource(value))
        except (OSError, TypeError):
            raise NotPortable(f"cannot read the source of {value.__name__}") from None
        lines.append(source if value.__name__ == name else f"{source}\n{name} = "
                     f"{value.__name__}")
        return
    if _is_literal(value):
        statement = _defining_statement(name, _namespace_of(lines))
        if statement is None:
            lines.append(f"{name} = {value!r}")
            return
        for used in sorted(_names_loaded(statement) - {name}):
            if used in _namespace_of(lines):
                _ship(used, _namespace_of(lines)[used], home, lines, seen)
        lines.append(statement)  # run again there: a per-process salt gets a new value
        return
    raise NotPortable(
        f"{name!r} (a {type(value).__name__} object) lives only in this notebook's process; "
        "a new process cannot get it. Compute the value from the function's arguments "
        "(for a key: from the state) instead."
    )


def _globals_used(code: types.CodeType) -> set[str]:
    names = {i.argval for i in dis.get_instructions(code)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _globals_used(const)
    return {n for n in names if isinstance(n, str)}


def _is_literal(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(_is_literal(k) and _is_literal(v) for k, v in value.items())
    return False
