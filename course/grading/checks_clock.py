"""Every clock, the ``uuid`` generators and the ``random`` seed moved for a block.

:func:`perturbed` lets a test show that a value does not depend on when, or by which
dice, it was computed. Re-exported by :mod:`course.grading.checks`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

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
