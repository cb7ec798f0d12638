"""Resume, branch or abandon: the recovery policy, decided before the incident.

A checkpoint gives a failed run something to come back from; this module
decides *how*, mechanically, so nobody has to improvise at 2 a.m.

- :func:`select_recovery` is the policy itself, four questions in a fixed order:
  is the saved state unusable (corrupt checkpoint) or the money/time budget
  spent? Then :attr:`Recovery.ABANDON`: going back would walk into the same
  state. Is someone investigating? Then :attr:`Recovery.BRANCH`: fork from a
  past checkpoint and leave the original untouched. Was the failure transient
  (a timeout, a 429, a network blip, a restarted process)? Then
  :attr:`Recovery.RESUME` the same thread. Anything else is
  :attr:`Recovery.ABANDON` too: an unknown error is escalated to a person, never
  retried in a loop.
- :func:`diagnose_checkpoints` looks at a ``SqliteSaver`` file without changing
  it and says whether it can be resumed from, naming the problem and the file
  (missing, empty, not a database, truncated, malformed, missing tables, a
  checkpoint that cannot be read back, no checkpoint for the thread).
- :func:`classify_error` turns an exception into one of the policy's error
  types (``timeout``, ``rate_limit``, ``network``, ``restart``, ...).
- :func:`decide` puts them together: an exception (or an error type), an
  optional checkpoint file and the two flags in; a :class:`Decision`
  ``(recovery, reason)`` out, where the reason says what to do next.
"""

from __future__ import annotations

import sqlite3
import struct
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import NamedTuple

from course.base import shown_path

TRANSIENT = frozenset({"timeout", "rate_limit", "network", "restart"})
SQLITE_MAGIC = b"SQLite format 3\x00"


class Recovery(Enum):
    RESUME = "resume"  # continue the same thread from its last checkpoint
    BRANCH = "branch"  # fork a new line from a past checkpoint; the original stays as it was
    ABANDON = "abandon"  # stop, keep the evidence, start clean (or hand to a person)


def select_recovery(
    error_type: str,
    budget_exhausted: bool,
    checkpoint_unusable: bool,
    is_debugging: bool,
) -> Recovery:
    """The policy. The order of the questions is the policy: an unusable checkpoint (corrupt,
    missing, or without the thread) is abandoned even while debugging, and a spent budget
    even for a transient error."""
    if checkpoint_unusable or budget_exhausted:
        return Recovery.ABANDON  # resuming would re-enter the state that is the problem
    if is_debugging:
        return Recovery.BRANCH  # explore a fix beside the original run, not on top of it
    if error_type in TRANSIENT:
        return Recovery.RESUME  # the world hiccuped; the saved state is fine
    return Recovery.ABANDON  # unknown or permanent: escalate instead of looping


# ------------------------------------------------------------------ diagnosis
@dataclass(frozen=True)
class Diagnosis:
    """What :func:`diagnose_checkpoints` found. ``ok`` means a resume can start from it."""

    path: Path
    problem: str | None  # None, or one of PROBLEMS
    message: str
    threads: int = 0
    checkpoints: int = 0

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def corrupt(self) -> bool:
        """The file itself is damaged (as opposed to merely absent or without this thread)."""
        return self.problem in CORRUPTION


CORRUPTION = frozenset({"empty", "not_a_database", "truncated", "malformed", "missing_tables",
                        "unreadable_checkpoint"})
PROBLEMS = CORRUPTION | {"missing", "no_checkpoint"}


def diagnose_checkpoints(path: str | Path, thread_id: str | None = None) -> Diagnosis:
    """Check a LangGraph ``SqliteSaver`` database before resuming from it.

    Reads only (no table is created, nothing is repaired). With ``thread_id``,
    also checks that the thread has a checkpoint and that every one of its
    checkpoints and pending writes deserialises; without, checks every thread.
    """
    path = Path(path)
    where = f"checkpoint database {shown_path(path)}"
    if not path.exists():
        return Diagnosis(path, "missing", f"{where} does not exist: there is nothing to resume")
    size = path.stat().st_size
    if size == 0:
        return Diagnosis(path, "empty", f"{where} is empty (0 bytes): its checkpoints are gone")
    with path.open("rb") as file:
        header = file.read(100)
    if not header.startswith(SQLITE_MAGIC):
        return Diagnosis(path, "not_a_database",
                         f"{where} is not a SQLite database (its first bytes are "
                         f"{header[:16]!r}, not the SQLite header)")
    truncated = _truncation(header, size)
    if truncated:
        return Diagnosis(path, "truncated", f"{where} is truncated: {truncated}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        return Diagnosis(path, "malformed", f"{where} cannot be opened: {error}")
    try:
        return _diagnose_open(conn, path, where, thread_id)
    except sqlite3.DatabaseError as error:
        return Diagnosis(path, "malformed", f"{where} is malformed: {error}")
    finally:
        conn.close()


def _truncation(header: bytes, size: int) -> str:
    """Compare the file's length with what its 100-byte header promises."""
    if len(header) < 100:
        return f"the file has {size} bytes, less than SQLite's 100-byte header"
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    pages = struct.unpack(">I", header[28:32])[0]
    header_count_valid = header[92:96] == header[24:28] and pages > 0
    if size % page_size:
        return (f"its length ({size} bytes) is not a whole number of {page_size}-byte pages; "
                "the end of the file was cut off")
    if header_count_valid and size < pages * page_size:
        return (f"the header promises {pages} pages of {page_size} bytes "
                f"({pages * page_size} bytes) but the file has only {size}")
    return ""


def _diagnose_open(conn: sqlite3.Connection, path: Path, where: str,
                   thread_id: str | None) -> Diagnosis:
    problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        return Diagnosis(path, "malformed",
                         f"{where} is malformed: SQLite's quick_check says {problems[0]!r}"
                         + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = sorted({"checkpoints", "writes"} - tables)
    if missing:
        return Diagnosis(path, "missing_tables",
                         f"{where} has no {' and no '.join(missing)} table: it is not a "
                         "LangGraph SqliteSaver file, or it was never set up")
    threads = [row[0] for row in conn.execute(
        "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]
    if thread_id is not None:
        if thread_id not in threads:
            return Diagnosis(path, "no_checkpoint",
                             f"{where} has no checkpoint for thread {thread_id!r} "
                             f"(threads there: {', '.join(threads[:5]) or 'none'})",
                             len(threads))
        threads = [thread_id]
    saver = _read_only_saver(conn)
    count = 0
    for thread in threads:
        config = {"configurable": {"thread_id": thread}}
        try:
            for _ in saver.list(config):  # deserialises every checkpoint and its writes
                count += 1
        except sqlite3.DatabaseError:
            raise
        except Exception as error:  # any failure to decode is the finding
            return Diagnosis(path, "unreadable_checkpoint",
                             f"{where}: a checkpoint of thread {thread!r} cannot be read back "
                             f"({type(error).__name__}: {str(error)[:120]})", len(threads), count)
    return Diagnosis(path, None, f"{where} is readable: {count} checkpoint(s) in "
                     f"{len(threads)} thread(s)", len(threads), count)


def _read_only_saver(conn: sqlite3.Connection):
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn)
    saver.is_setup = True  # never run setup(): it would create tables in a damaged file
    return saver


# ------------------------------------------------------------------ decisions
class BudgetExhausted(Exception):
    """The run spent what it was allowed (money, tokens, attempts or time)."""


class Decision(NamedTuple):
    recovery: Recovery
    reason: str


def classify_error(error: BaseException | str | None) -> str:
    """The policy's name for a failure: ``timeout``, ``rate_limit``, ``network``,
    ``restart``, ``corrupt``, ``budget``, ``invalid_request``, or the exception's name.

    An exception may name its own kind with a ``recovery_kind`` class attribute: that is
    how the billing simulator's errors (one floor up, in :mod:`course.world`) are
    classified without this module importing them."""
    if error is None:
        return "restart"  # the process died without telling us why (a kill, a preemption)
    if isinstance(error, str):
        return error
    from langgraph.errors import GraphRecursionError

    from course.durable.guard import GuardArgsMismatch, NeedsReconcile
    from course.durable.idempotency import CorruptRecord

    declared = getattr(error, "recovery_kind", None)
    if isinstance(declared, str):  # errors from the world below say what they are
        return declared
    kinds: list[tuple[type | tuple[type, ...], str]] = [
        (TimeoutError, "timeout"),
        (ConnectionError, "network"),
        (NeedsReconcile, "restart"),  # a process died mid-step: reconcile, then resume
        ((CorruptRecord, sqlite3.DatabaseError), "corrupt"),
        ((BudgetExhausted, GraphRecursionError), "budget"),  # the step budget (recursion_limit)
        (GuardArgsMismatch, "invalid_request"),
    ]
    for types, name in kinds:
        if isinstance(error, types):
            return name
    return type(error).__name__


def decide(
    error: BaseException | str | None = None,
    *,
    checkpoints: str | Path | Diagnosis | None = None,
    thread_id: str | None = None,
    budget_exhausted: bool = False,
    is_debugging: bool = False,
) -> Decision:
    """Classify ``error``, diagnose ``checkpoints`` (a path or a :class:`Diagnosis`),
    apply :func:`select_recovery` and explain the choice in one message."""
    error_type = classify_error(error)
    diagnosis = (diagnose_checkpoints(checkpoints, thread_id)
                 if isinstance(checkpoints, str | Path) else checkpoints)
    budget = budget_exhausted or error_type == "budget"
    state_corrupt = error_type == "corrupt"
    unusable = diagnosis is not None and not diagnosis.ok
    recovery = select_recovery(error_type, budget, unusable or state_corrupt, is_debugging)
    if recovery is Recovery.ABANDON:
        if unusable:
            assert diagnosis is not None
            reason = f"abandon: {diagnosis.message}"
        elif state_corrupt:
            reason = (f"abandon: the saved state is corrupt ({error}); reconcile it by hand "
                      "against the provider, then start a clean run")
        elif budget:
            reason = ("abandon: the budget is spent; resuming would spend more on the same "
                      "state. Settle what was in flight and end the thread; its replay log and "
                      "the guard's records stay as evidence for the post-mortem")
        else:
            reason = (f"abandon: {error_type!r} is not a known transient failure; escalate to "
                      "a person instead of retrying (the replay log and the guard's records "
                      "stay as evidence)")
    elif recovery is Recovery.BRANCH:
        reason = ("branch: debugging; fork from a past checkpoint (update_state on its config) "
                  "so the original run stays untouched")
    else:
        reason = (f"resume: {error_type!r} is transient; invoke(None, config) on the same "
                  "thread_id continues from the last checkpoint")
        if error_type == "restart" and error is not None and not isinstance(error, str):
            reason += " after reconciling the in-flight step (course.durable.guard.reconcile)"
    return Decision(recovery, reason)
