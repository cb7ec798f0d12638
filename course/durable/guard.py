"""``guarded``: run a side effect at most once across crashes and retries.

The ordering rule, in code:

1. If the store already holds a finished record for this step, return its
   recorded result: the effect is not fired again.
2. If it holds an in-flight record, the previous attempt died between firing
   and recording. The effect may have landed. Raise :class:`NeedsReconcile`;
   never fire blindly.
3. Otherwise record the intent (durably, with the idempotency key) *before*
   the effect, call ``fn(**args, idem_key=key)`` so the provider can
   deduplicate too, and record the result *after* it lands.
4. If ``fn`` raises, the intent stays in flight (the effect may have landed:
   a timeout, a lost response), unless the error says ``effect_landed =
   False`` (a refusal such as an invalid amount): then the intent is cleared,
   because there is certainly nothing to reconcile.

:func:`reconcile` settles an in-flight record by asking the provider what
happened to the key: landed (record it as done) or never landed (clear it, so
the next ``guarded`` call fires once more, with the same key).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal

from course.base import crashpoints
from course.durable.idempotency import IdempotencyStore, RecordExists, StepRecord


class NeedsReconcile(Exception):
    """A step was in flight when its process died; check with the provider before going on."""

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
) -> Any:
    """Run ``fn(**args, idem_key=...)`` at most once for ``(session_id, step)``."""
    rid = record_id(session_id, step)
    digest = args_hash(args)
    record = store.get(rid)
    if record is None:
        key = idem_key(session_id, step, args)
        try:
            record = store.record_intent(rid, key, digest)  # durable before the effect
        except RecordExists as race:  # another process recorded it first
            record = race.existing
        else:
            try:
                result = fn(**args, idem_key=key)
            except Exception as error:
                if getattr(error, "effect_landed", None) is False:
                    store.clear(rid)  # a refusal: nothing happened, so nothing to reconcile
                raise
            crashpoints.provider_answered()  # crash point "before_record": the lost 200
            store.record_result(rid, result)  # durable after it lands
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


Outcome = Literal["nothing_to_do", "landed", "not_landed"]


def reconcile(
    session_id: str,
    step: str,
    *,
    store: IdempotencyStore,
    lookup: Callable[[str], Any | None],
) -> Outcome:
    """Settle an in-flight record. ``lookup(idem_key)`` returns the provider's result
    for that key, or ``None`` if the provider never committed it."""
    rid = record_id(session_id, step)
    record = store.get(rid)
    if record is None or record.status == "done":
        return "nothing_to_do"
    found = lookup(record.idem_key)
    if found is not None:
        store.record_result(rid, found)
        return "landed"
    store.clear(rid)
    return "not_landed"
