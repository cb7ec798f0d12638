"""``guarded``: run a side effect at most once across crashes and retries.

The ordering rule, in code:

1. If the store already holds a finished record for this step, return its
   recorded result: the effect is not fired again. A recorded ``None`` or an
   empty result counts as done too.
2. If it holds an in-flight record, the previous attempt died (or froze)
   between firing and recording. The effect may have landed. Raise
   :class:`NeedsReconcile`; never fire blindly.
3. Otherwise record the intent (durably, with the idempotency key and the
   arguments) *before* the effect, call ``fn(**args, idem_key=key)`` so the
   provider can deduplicate too, and record the result *after* it lands.
4. If ``fn`` raises, the intent stays in flight (the effect may have landed:
   a timeout, a lost response) unless the error says ``effect_landed =
   False`` (a refusal such as an invalid amount or a declined card): then the
   intent is cleared, because there is certainly nothing to reconcile.

:func:`reconcile` settles an in-flight record the way Stripe allows: it sends
**the same request again with the same key** and reads the answer. A stored
response means the first call landed (``replayed=True``); a 409 "key in use"
means it is still being processed (try later); a provider that never got it
processes it now, once. For a provider without keys, pass ``lookup`` instead:
it lists your own objects (by the metadata you attached) and says whether one
carries the key.

Fencing: each owner of a record holds a fencing token. :func:`reconcile` takes
the record over (a larger token) before it acts, so a worker that was frozen
mid-call and wakes up later cannot record over it: its write is refused with a
sentence that says another process took the step over or finished it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal

from course.base import crashpoints
from course.durable.idempotency import IdempotencyStore, RecordExists, StepRecord


class NeedsReconcile(RuntimeError):
    """A step was in flight when its process died; check with the provider before going on.

    A ``RuntimeError``, so LangGraph's default ``RetryPolicy`` (whose
    ``default_retry_on`` refuses ``RuntimeError`` and its subclasses) does not re-run the node
    blindly: retrying cannot settle it, only :func:`reconcile` can."""

    def __init__(self, step: str, idem_key: str, session_id: str = "") -> None:
        super().__init__(
            f"step {step!r} of session {session_id!r} was in flight when the last run died; "
            f"its effect may have landed. Reconcile key {idem_key} with the provider, "
            "do not fire it again blindly."
        )
        self.step = step
        self.idem_key = idem_key
        self.session_id = session_id


class GuardArgsMismatch(ValueError):
    """The same session and step were called again with different arguments."""


def args_hash(args: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()


def idem_key(session_id: str, step: str, args: dict[str, Any]) -> str:
    """A stable fingerprint of the intent: same session, step and arguments, same key."""
    raw = f"{session_id}:{step}:{json.dumps(args, sort_keys=True)}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def readable_key(*parts: str, limit: int = 255) -> str:
    """``"part:part:part"``, a key a person can read in a table, never over ``limit`` characters.

    A key that would be too long keeps its readable start and ends with a hash
    of the whole, so two long keys that share a start still differ.
    """
    joined = ":".join(str(p) for p in parts)
    if len(joined) <= limit:
        return joined
    digest = hashlib.sha256(joined.encode()).hexdigest()[:32]
    return f"{joined[: limit - len(digest) - 1]}~{digest}"


def record_id(session_id: str, step: str) -> str:
    return f"{session_id}:{step}"


def guarded(
    session_id: str,
    step: str,
    fn: Callable[..., Any],
    args: dict[str, Any],
    *,
    store: IdempotencyStore,
    fence: int = 1,
) -> Any:
    """Run ``fn(**args, idem_key=...)`` at most once for ``(session_id, step)``.

    - Finished before: the recorded result is returned, even when it is ``None`` or empty;
      ``fn`` is not called.
    - In flight (an earlier attempt died or froze mid-call): :class:`NeedsReconcile`.
    - Recorded with other ``args``: :class:`GuardArgsMismatch` (nothing is called).
    - ``fn`` raises an error whose ``effect_landed`` is ``False`` (a definite refusal):
      the intent is cleared and the error re-raised; a later call may fire again.
    - ``fn`` raises anything else (the outcome is unknown): the intent stays in flight,
      so the next call raises :class:`NeedsReconcile`.
    - While ``fn`` ran, another process took the step over (:func:`reconcile`) or
      finished it: the late result is refused with
      :class:`~course.durable.idempotency.Superseded` or
      :class:`~course.durable.idempotency.StepSettledElsewhere`, sentences that say so.

    ``fence`` is the caller's fencing token (for example its thread lease's); the
    record keeps it, and every write of this call carries it.
    """
    rid = record_id(session_id, step)
    digest = args_hash(args)
    record = store.get(rid)
    if record is None:
        key = idem_key(session_id, step, args)
        try:  # durable before the effect
            record = store.record_intent(rid, key, digest, args=args, fence=fence)
        except RecordExists as race:  # another process recorded it first
            record = race.existing
        else:
            crashpoints.intent_recorded()  # a mark for the fuzzer
            try:
                result = fn(**args, idem_key=key)
            except Exception as error:
                if getattr(error, "effect_landed", None) is False:
                    # a refusal: nothing happened, so nothing to reconcile
                    store.clear(rid, fence=record.fence)
                raise
            crashpoints.provider_answered()  # crash point "before_record": the lost 200
            store.record_result(rid, result, fence=record.fence)  # durable after it lands
            return result
    return _settled(record, session_id, step, digest)


def _settled(record: StepRecord, session_id: str, step: str, digest: str) -> Any:
    if record.args_hash != digest:
        raise GuardArgsMismatch(
            f"step {step!r} of session {session_id!r} was first run with other arguments; "
            "a retry must repeat the same request (use a new step name for a new request)"
        )
    if record.status == "done":
        return record.result
    raise NeedsReconcile(step, record.idem_key, session_id)


Outcome = Literal["nothing_to_do", "landed", "sent_now", "not_landed"]


def reconcile(
    session_id: str,
    step: str,
    fn: Callable[..., Any] | None = None,
    *,
    store: IdempotencyStore,
    lookup: Callable[[str], Any | None] | None = None,
    fence: int | None = None,
) -> Outcome:
    """Settle an in-flight record; return what happened.

    First the record is taken over (its fencing token goes up, to ``fence`` if given):
    the worker that left it in flight can no longer record over it.

    With ``fn`` (a provider with idempotency keys; the same callable ``guarded`` was
    given), the same request is sent again: ``fn(**recorded_args, idem_key=recorded_key)``.

    - The provider answers with its stored response (``replayed=True``): the first call
      landed. The answer is recorded; ``"landed"``.
    - The provider had not committed it and processes it now, once: recorded; ``"sent_now"``.
    - The provider answers "key in use" (409, ``retryable`` with ``effect_landed=False``)
      or any outcome-unknown error: the record stays in flight and the error is raised.
      Try again later.
    - A definite refusal (``effect_landed=False``, not retryable, e.g. a stored card
      decline replayed): the record is cleared and the error raised.

    With ``lookup`` (a provider without keys), ``lookup(idem_key)`` lists your own objects
    and returns the one that carries the key in its metadata, or ``None``: found, recorded,
    ``"landed"``; not found, cleared, ``"not_landed"`` (the next ``guarded`` call fires
    again, with the same key). Only safe once the earlier caller can no longer commit.
    """
    if (fn is None) == (lookup is None):
        raise TypeError("reconcile needs exactly one of fn (re-send with the same key) "
                        "or lookup (list your own objects)")
    rid = record_id(session_id, step)
    record = store.get(rid)
    if record is None or record.status == "done":
        return "nothing_to_do"
    record = store.take_over(rid, fence)
    if record is None or record.status == "done":
        return "nothing_to_do"  # settled by someone else in between
    if lookup is not None:
        found = lookup(record.idem_key)
        if found is None:
            store.clear(rid, fence=record.fence)
            return "not_landed"
        store.record_result(rid, found, fence=record.fence)
        return "landed"
    if record.args is None:
        raise ValueError(f"step {step!r} of session {session_id!r} was recorded without its "
                         "arguments, so it cannot be sent again; reconcile it with lookup=")
    assert fn is not None
    try:
        answer = fn(**record.args, idem_key=record.idem_key)
    except Exception as error:
        refused = getattr(error, "effect_landed", None) is False
        if refused and not getattr(error, "retryable", False):
            store.clear(rid, fence=record.fence)
        raise
    store.record_result(rid, answer, fence=record.fence)
    replayed = isinstance(answer, dict) and answer.get("replayed") is True
    return "landed" if replayed else "sent_now"
