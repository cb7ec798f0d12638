"""Helpers the graded notebooks' tests share, so no test helper is pasted twice.

Each one makes a test *real* rather than pretend:

- :func:`in_fresh_interpreter` runs a notebook function (for example a key
  builder) in a brand-new Python process with its own hash seed, re-running
  the notebook code it depends on from its source, and returns what it
  returned there. A key that depends on ``hash()``, ``id()``, the process id
  or a per-process random salt made when a cell ran comes back different.
  :func:`portable_source` is how the function travels: its source, plus the
  notebook helpers and constants it uses, plus imports for everything else. A
  function that reads a notebook object that cannot travel (a ``World``, an
  open connection) gets a :class:`NotPortable` error that says which name.
- :func:`perturbed` moves every clock (``time.time``, ``monotonic``,
  ``perf_counter``, ``strftime``, ``datetime.now``, ``date.today``, ...), the
  ``uuid`` generators and the ``random`` seed, so a test can show that a value does not
  depend on when or by which dice it was computed.
- :func:`run_forked` runs a function in a forked child and reports how the
  child ended (``"exit 0"``, ``"exit 1"``, ``"SIGKILL"``), so a test can kill a
  real process in the middle of a step. :func:`kill_self` is the kill: SIGKILL,
  no ``finally``, no flush.
- :func:`course_code_run` calls a function and names every function of the
  ``course`` package that ran meanwhile, so a test can check that a student's
  answer is their own rather than a call into the course's reference code.
- :class:`Spy` wraps an object and records which methods were called.
  :class:`DiesAfter` wraps an object and SIGKILLs the process right after one
  method returns (the effect landed; the caller never heard about it).
- :func:`course_policy_in` sets a notebook's ``select_recovery`` aside for the
  course's own while a block runs, so one exercise's mistake is graded once.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import datetime as _dt
import dis
import inspect
import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
import types
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from course.base import crashpoints, fork


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


# ------------------------------------------------------------------ perturbed
CLOCKS = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
          "localtime", "gmtime", "ctime", "asctime", "strftime")  # time's ways to tell the time


@contextlib.contextmanager
def perturbed(namespace: dict[str, Any] | None = None, seed: int = 1) -> Iterator[None]:
    """Within the block every clock reads ``seed`` days and hours later (``time.time``,
    ``time_ns``, ``monotonic``, ``perf_counter`` and their ``_ns`` forms, ``localtime``,
    ``gmtime``, ``ctime``, ``asctime``, ``strftime``, ``datetime.now/utcnow/today``,
    ``date.today``), ``uuid1``/``uuid4`` return other values and ``random`` is reseeded.

    Only the thread that entered the block sees the shifted clocks: the kernel's own
    threads (heartbeat, output) keep real time, so their timers are not disturbed.
    ``namespace`` (a notebook's globals) gets the same replacements for names imported
    with ``from x import y``."""
    shift = _dt.timedelta(days=3 * seed, hours=seed, microseconds=123_457 * seed)
    seconds, nanos = shift.total_seconds(), int(shift.total_seconds() * 1e9)
    me = threading.get_ident()
    real = {name: getattr(time, name) for name in CLOCKS}
    real_datetime, real_date = _dt.datetime, _dt.date
    real_uuid1, real_uuid4 = uuid.uuid1, uuid.uuid4
    dice = random.Random(seed * 7919)

    def mine() -> bool:
        return threading.get_ident() == me

    def moved(name: str) -> Callable[..., Any]:
        clock = real[name]
        if name.endswith("_ns"):
            return lambda: clock() + (nanos if mine() else 0)
        if name in ("time", "monotonic", "perf_counter"):
            return lambda: clock() + (seconds if mine() else 0)

        def at(*args: Any) -> Any:  # localtime(), strftime(fmt), ctime(), ... with no time
            if not mine():
                return clock(*args)
            given = args[1:] if name == "strftime" else args
            if given and given[0] is not None:
                return clock(*args)
            when = real["time"]() + seconds
            if name == "strftime":
                return clock(args[0], real["localtime"](when))
            if name == "asctime":
                return clock(real["localtime"](when))
            return clock(when)

        return at

    class ShiftedDatetime(real_datetime):
        @classmethod
        def now(cls, tz=None):
            return real_datetime.now(tz) + (shift if mine() else _dt.timedelta())

        @classmethod
        def utcnow(cls):
            return cls.now(_dt.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.now()

    class ShiftedDate(real_date):
        @classmethod
        def today(cls):
            return ShiftedDatetime.now().date()

    def fake_uuid(*_args: Any, **_kwargs: Any) -> uuid.UUID:
        return uuid.UUID(int=dice.getrandbits(128))

    swaps: dict[Any, Any] = {real[name]: moved(name) for name in CLOCKS}
    swaps |= {real_datetime: ShiftedDatetime, real_date: ShiftedDate,
              real_uuid1: fake_uuid, real_uuid4: fake_uuid}
    patched: list[tuple[Any, str, Any]] = [(time, name, real[name]) for name in CLOCKS]
    patched += [(_dt, "datetime", real_datetime), (_dt, "date", real_date),
                (uuid, "uuid1", real_uuid1), (uuid, "uuid4", real_uuid4)]
    names = [k for k, v in (namespace or {}).items() if _swappable(v, swaps)]
    old_names = {k: namespace[k] for k in names} if namespace is not None else {}
    random_state = random.getstate()
    try:
        for owner, attr, original in patched:
            setattr(owner, attr, swaps[original])
        for k in names:
            namespace[k] = swaps[namespace[k]]  # type: ignore[index]
        random.seed(seed)
        time.sleep(0.002)  # and real time moves on too
        yield
    finally:
        for owner, attr, original in patched:
            setattr(owner, attr, original)
        if namespace is not None:
            namespace.update(old_names)
        random.setstate(random_state)


def _swappable(value: Any, swaps: dict[Any, Any]) -> bool:
    try:
        return value in swaps
    except Exception:  # unhashable or oddly comparing notebook objects are left alone
        return False


# --------------------------------------------------------------------- forks
def kill_self() -> None:
    """SIGKILL this process: no ``finally``, no flush, like a preempted container."""
    crashpoints.die()


def run_forked(body: Callable[[], Any], *, timeout_s: float = 60,
               process_group: bool = False) -> str:
    """Run ``body()`` in a forked child; return ``"exit <code>"``, the signal's name, or
    ``"timeout"``.

    The child exits 0 when ``body`` returns and 1 when it raises (the traceback
    goes to stderr). A child still running after ``timeout_s`` is killed; with
    ``process_group`` the child leads a process group of its own and the whole group
    is killed, with every process it started.
    """
    def discarding() -> None:  # what ``body`` returns is not an exit code
        body()

    child = fork.start(discarding, own_group=process_group)
    ended = child.wait(time.monotonic() + timeout_s)
    if ended is None:
        child.kill()
        return "timeout"
    return str(ended)


# ------------------------------------------------------- whose code ran
_COURSE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def course_code_run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """Call ``fn(*args, **kwargs)``; return, sorted, the ``module.function`` names of the
    ``course`` package's functions that code outside the package called during the call
    (``[]``: none; what those functions call in turn is not listed).

    Whatever ``fn`` raises is raised again, after the watch is removed."""
    ran: set[str] = set()
    prefix = _COURSE_DIR + os.sep
    here = course_code_run.__code__  # fn itself is called from this frame

    def watch(frame: types.FrameType, event: str, arg: Any) -> None:
        code, caller = frame.f_code, frame.f_back
        inside = caller is not None and caller.f_code is not here \
            and caller.f_code.co_filename.startswith(prefix)  # called by the course itself
        if event == "call" and code.co_filename.startswith(prefix) \
                and not code.co_name.startswith("<") and not inside:
            ran.add(f"{frame.f_globals.get('__name__', '?')}.{code.co_qualname}")

    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(before)
    return sorted(ran)


# --------------------------------------------------------------------- proxies
class Spy:
    """Forwards everything to ``target``; ``calls`` lists ``(method, kwargs)`` in order."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}))
            return value(*args, **kwargs)

        return recorded

    def called(self, name: str) -> int:
        return sum(1 for method, _ in self.calls if method == name)


class DiesAfter:
    """Forwards to ``target``; after ``method`` returns, the process is SIGKILLed."""

    def __init__(self, target: Any, method: str) -> None:
        self._target = target
        self._method = method

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name != self._method:
            return value

        def then_die(*args: Any, **kwargs: Any) -> Any:
            value(*args, **kwargs)
            kill_self()

        return then_die


# -------------------------------------------------------------------- swaps
@contextlib.contextmanager
def course_policy_in(namespace: dict[str, Any]) -> Iterator[None]:
    """Run a block with the notebook's ``select_recovery`` set aside for the course's own,
    so a test of what uses the policy does not grade the policy twice; the notebook's
    answer is put back afterwards, even when the block fails."""
    from course.durable.recovery import select_recovery

    missing = object()
    theirs = namespace.get("select_recovery", missing)
    namespace["select_recovery"] = select_recovery
    try:
        yield
    finally:
        if theirs is missing:
            namespace.pop("select_recovery", None)
        else:
            namespace["select_recovery"] = theirs
