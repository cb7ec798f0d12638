"""Helpers the graded notebooks' tests share, so no test helper is pasted twice.

Each one makes a test *real* rather than pretend:

- :func:`in_fresh_interpreter` runs a notebook function (for example a key
  builder) in a brand-new Python process with its own hash seed, and returns
  what it returned there. A key that depends on ``hash()``, ``id()``, the
  process id or a per-process random salt comes back different.
  :func:`portable_source` is how the function travels: its source, plus the
  notebook helpers and constants it uses, plus imports for everything else. A
  function that reads a notebook object that cannot travel (a ``World``, an
  open connection) gets a :class:`NotPortable` error that says which name.
- :func:`perturbed` moves the clock (``time``, ``datetime``), the ``uuid``
  generators and the ``random`` seed, so a test can show that a value does not
  depend on when or by which dice it was computed.
- :func:`run_forked` runs a function in a forked child and reports how the
  child ended (``"exit 0"``, ``"exit 1"``, ``"SIGKILL"``), so a test can kill a
  real process in the middle of a step. :func:`kill_self` is the kill: SIGKILL,
  no ``finally``, no flush.
- :class:`Spy` wraps an object and records which methods were called.
  :class:`DiesAfter` wraps an object and SIGKILLs the process right after one
  method returns (the effect landed; the caller never heard about it).
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as _dt
import dis
import inspect
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import types
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from course.base import crashpoints


class NotPortable(Exception):
    """A function uses something that a new process cannot get."""


# ---------------------------------------------------------------- fresh process
def portable_source(fn: Callable[..., Any]) -> str:
    """Python source that defines ``fn`` (under its own name) in a new interpreter."""
    lines: list[str] = []
    _ship(fn.__name__, fn, fn.__module__, lines, set())
    return "\n".join(lines)


def in_fresh_interpreter(fn: Callable[..., Any], *args: Any, hash_seed: int = 1,
                         timeout_s: float = 60) -> Any:
    """``fn(*args)`` computed in a new Python process (arguments and result as JSON)."""
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
        lines.append(f"{name} = {value!r}")
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
@contextlib.contextmanager
def perturbed(namespace: dict[str, Any] | None = None, seed: int = 1) -> Iterator[None]:
    """Within the block the clock reads ``seed`` days and hours later, ``uuid1``/``uuid4``
    return other values and ``random`` is reseeded. ``namespace`` (a notebook's
    globals) gets the same replacements for names imported with ``from x import y``."""
    shift = _dt.timedelta(days=3 * seed, hours=seed, microseconds=123_457 * seed)
    real_time, real_time_ns = time.time, time.time_ns
    real_datetime, real_date = _dt.datetime, _dt.date
    real_uuid1, real_uuid4 = uuid.uuid1, uuid.uuid4
    dice = random.Random(seed * 7919)

    class ShiftedDatetime(real_datetime):
        @classmethod
        def now(cls, tz=None):
            return real_datetime.now(tz) + shift

        @classmethod
        def utcnow(cls):
            return real_datetime.now(_dt.UTC).replace(tzinfo=None) + shift

        @classmethod
        def today(cls):
            return real_datetime.today() + shift

    class ShiftedDate(real_date):
        @classmethod
        def today(cls):
            return (real_datetime.now() + shift).date()

    def fake_uuid(*_args: Any, **_kwargs: Any) -> uuid.UUID:
        return uuid.UUID(int=dice.getrandbits(128))

    swaps: dict[Any, Any] = {
        real_time: lambda: real_time() + shift.total_seconds(),
        real_time_ns: lambda: real_time_ns() + int(shift.total_seconds() * 1e9),
        real_datetime: ShiftedDatetime, real_date: ShiftedDate,
        real_uuid1: fake_uuid, real_uuid4: fake_uuid,
    }
    patched: list[tuple[Any, str, Any]] = [
        (time, "time", real_time), (time, "time_ns", real_time_ns),
        (_dt, "datetime", real_datetime), (_dt, "date", real_date),
        (uuid, "uuid1", real_uuid1), (uuid, "uuid4", real_uuid4),
    ]
    names = [k for k, v in (namespace or {}).items() if _swappable(v, swaps)]
    old_names = {k: namespace[k] for k in names} if namespace is not None else {}
    random_state = random.getstate()
    try:
        for owner, attr, real in patched:
            setattr(owner, attr, swaps[real])
        for k in names:
            namespace[k] = swaps[namespace[k]]  # type: ignore[index]
        random.seed(seed)
        time.sleep(0.002)  # and real time moves on too
        yield
    finally:
        for owner, attr, real in patched:
            setattr(owner, attr, real)
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


def run_forked(body: Callable[[], Any], *, timeout_s: float = 60) -> str:
    """Run ``body()`` in a forked child; return ``"exit <code>"`` or the signal's name.

    The child exits 0 when ``body`` returns and 1 when it raises (the traceback
    goes to stderr). A child still running after ``timeout_s`` is killed.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            body()
            code = 0
        except BaseException:  # the child must never return into the caller's code
            import traceback

            traceback.print_exc(file=sys.__stderr__)
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.002)
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return f"exit {os.WEXITSTATUS(status)}"


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
