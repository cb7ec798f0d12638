"""CloudWave's mail vendor and a partner webhook that ignores idempotency keys.

:class:`MailVendor` accepts an optional ``email_id``: a second send with the same
id returns the first message (``replayed=True``) and sends nothing. Without an
id every call sends, which is how a customer gets three "we refunded you" mails.

:class:`VendorWebhook` is a partner endpoint that accepts any key you send and
ignores it: every post is a delivery. Nothing on the caller's side can make it
idempotent by key, which is why the course puts an outbox (or a human) in front.

Both live in SQLite files so they survive the SIGKILL of the process that called them.
"""

from __future__ import annotations

import json
from typing import Any

from course.storage.sqlite import SqliteBacked, transaction
from course.world.billing_errors import InvalidRequest
from course.world.billing_requests import KEY_MAX_CHARS

_MAIL_SCHEMA = """
CREATE TABLE IF NOT EXISTS mail (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, email_id TEXT UNIQUE, to_addr TEXT NOT NULL,
    template TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL);
"""

_WEBHOOK_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, payload TEXT NOT NULL,
    idempotency_key_ignored TEXT);
"""


class MailVendor(SqliteBacked):
    """Sends (records) mail. Deduplicates by ``email_id`` when one is given."""

    schema = _MAIL_SCHEMA

    def send(
        self, *, to: str, template: str, subject: str, body: str, email_id: str | None = None
    ) -> dict[str, Any]:
        if email_id is not None and (not isinstance(email_id, str) or not email_id
                                     or len(email_id) > KEY_MAX_CHARS):
            raise InvalidRequest(
                f"email_id must be a string of 1 to {KEY_MAX_CHARS} characters, got {email_id!r}"
            )
        if not to or "@" not in to:
            raise InvalidRequest(f"not an email address: {to!r}")
        with transaction(self._conn):
            if email_id is not None:
                row = self._conn.execute(
                    "SELECT * FROM mail WHERE email_id = ?", (email_id,)).fetchone()
                if row is not None:
                    return {**_message(row), "replayed": True}
            cur = self._conn.execute(
                "INSERT INTO mail (email_id, to_addr, template, subject, body) "
                "VALUES (?, ?, ?, ?, ?)", (email_id, to, template, subject, body))
            row = self._conn.execute(
                "SELECT * FROM mail WHERE seq = ?", (cur.lastrowid,)).fetchone()
        return {**_message(row), "replayed": False}

    def sent(self) -> list[dict[str, Any]]:
        return [_message(r) for r in self._conn.execute("SELECT * FROM mail ORDER BY seq")]


class VendorWebhook(SqliteBacked):
    """A partner endpoint that takes a key and ignores it: every post is delivered."""

    schema = _WEBHOOK_SCHEMA

    def post(self, event: str, payload: dict[str, Any],
             idempotency_key: str | None = None) -> dict[str, Any]:
        """Deliver ``event`` with ``payload`` (a dict, sent as a JSON object); the key is ignored.

        Raises:
            InvalidRequest: ``payload`` is not a dict (JSON text kept in an outbox is decoded
                with ``json.loads`` before it is posted), or is not JSON-serialisable.
        """
        if not isinstance(payload, dict):
            raise InvalidRequest(
                f"a webhook payload is a JSON object (a dict), got {type(payload).__name__} "
                f"{str(payload)[:60]!r}; if it is JSON text from your outbox, json.loads it first")
        try:
            body = json.dumps(payload, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise InvalidRequest(f"a webhook payload must be JSON-serialisable: {error}") from None
        with transaction(self._conn):
            cur = self._conn.execute(
                "INSERT INTO deliveries (event, payload, idempotency_key_ignored) VALUES (?, ?, ?)",
                (event, body, idempotency_key))
        return {"delivery": cur.lastrowid, "event": event, "status": 202}

    def deliveries(self) -> list[dict[str, Any]]:
        return [
            {"seq": r["seq"], "event": r["event"], "payload": json.loads(r["payload"])}
            for r in self._conn.execute("SELECT * FROM deliveries ORDER BY seq")
        ]


def _message(row) -> dict[str, Any]:
    return {"id": f"msg_{row['seq']:06d}", "email_id": row["email_id"], "to": row["to_addr"],
            "template": row["template"], "subject": row["subject"], "body": row["body"]}
