"""A scripted model behind Anthropic's Messages API, on 127.0.0.1: only the model is fake.

The real Claude Code CLI (or any client that takes a base URL: the ``anthropic`` SDK,
``langchain-anthropic``'s ``ChatAnthropic(base_url=...)``) sends its requests here with
``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>``. :class:`ScriptedAPI` answers
``POST /v1/messages`` as the API does: with ``"stream": true`` as server-sent events
(``message_start``, then per content block ``content_block_start`` / ``content_block_delta``
(``text_delta`` or ``input_json_delta``) / ``content_block_stop``, ``message_delta`` with the
``stop_reason``, ``message_stop``), otherwise as one JSON message.
``POST /v1/messages/count_tokens`` gets a rough count; anything else a 404 in the API's
error shape.

The "model" plays a script, the same steps as the course's stand-in CLI:
``{"tool": name, "input": {...}}`` and a final ``{"text": ...}``. Like the course's other
scripted models it reads the conversation it is sent, not a counter (a counter dies with
the process): it replies with the first scripted tool that has no successful
``tool_result`` in the conversation yet and was not already called since the last prompt.
So a tool that already answered is not called again, one whose call never got an answer
(the process died) is called again after the next prompt, by a new server in a new process
just as by the old one, and a tool that keeps failing is tried once per prompt (the CLI
sets no turn limit of its own: without that rule a failing tool is called forever). Then
it sends the final text. The course's stand-in CLI plays its script by the same rules.

Every request is logged (:attr:`ScriptedAPI.requests`, and one JSON line per request in
``log`` when given): the path, the model asked for, how many messages and of which roles,
the tool names offered, the tool calls already answered, and what was replied, so a
lesson can show what the CLI sent.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Step = dict[str, Any]


def answered_tools(messages: list[dict[str, Any]]) -> list[str]:
    """Names of the tools whose call got a successful ``tool_result`` in ``messages``."""
    names: dict[str, str] = {}
    done: list[str] = []
    for message in messages:
        for block in _blocks(message):
            if block.get("type") == "tool_use":
                names[block.get("id", "")] = block.get("name", "")
            elif block.get("type") == "tool_result" and not block.get("is_error"):
                name = names.get(block.get("tool_use_id", ""))
                if name and name not in done:
                    done.append(name)
    return done


def next_step(script: list[Step], messages: list[dict[str, Any]]) -> Step:
    """The reply ``script`` gives to this conversation (see the module docstring)."""
    done = answered_tools(messages)
    tried = called_since_prompt(messages)
    for step in script:
        if "tool" in step and step["tool"] not in done and step["tool"] not in tried:
            return step
    return next((step for step in script if "text" in step), {"text": "Done."})


def called_since_prompt(messages: list[dict[str, Any]]) -> set[str]:
    """Tools called since the last prompt (a user message that is not only tool results):
    a tool that failed in this turn is not called again until the next prompt."""
    start = 0
    for index, message in enumerate(messages):
        if message.get("role") == "user" and not _only_results(message):
            start = index
    return {block.get("name", "") for message in messages[start:]
            if message.get("role") == "assistant"
            for block in _blocks(message) if block.get("type") == "tool_use"}


def _only_results(message: dict[str, Any]) -> bool:
    blocks = _blocks(message)
    return (not isinstance(message.get("content"), str) and bool(blocks)
            and all(b.get("type") == "tool_result" for b in blocks))


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


class ScriptedAPI:
    """A Messages API on ``127.0.0.1:<port>`` playing ``script``; a context manager.

    ``port=0`` takes a free port; :attr:`base_url` is what ``ANTHROPIC_BASE_URL`` gets.
    """

    def __init__(self, script: list[Step], *, log: str | Path | None = None,
                 port: int = 0, model: str = "claude-scripted-1") -> None:
        self.script = list(script)
        self.model = model
        self.log = Path(log) if log is not None else None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                api._serve(self)

            def do_GET(self) -> None:
                api._not_found(self)

            def do_HEAD(self) -> None:
                api._not_found(self)

            def log_message(self, *args: Any) -> None:  # quiet: the request log says it all
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedAPI:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever,
                                            name="scripted-messages-api", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> ScriptedAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- serving
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._error(handler, 400, "invalid_request_error", "the body is not JSON")
        if path == "/v1/messages/count_tokens":
            tokens = max(1, len(json.dumps(body.get("messages", []))) // 4)
            self._record(path, body, {"count_tokens": tokens})
            return self._json(handler, 200, {"input_tokens": tokens})
        if path != "/v1/messages":
            return self._not_found(handler)
        messages = body.get("messages") or []
        step = next_step(self.script, messages)
        reply = self._message(step, body, messages)
        self._record(path, body, {"tool": step["tool"]} if "tool" in step
                     else {"text": step["text"]})
        if body.get("stream"):
            self._stream(handler, reply)
        else:
            self._json(handler, 200, reply)

    def _message(self, step: Step, body: dict[str, Any],
                 messages: list[dict[str, Any]]) -> dict[str, Any]:
        if "tool" in step:
            content = [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}",
                        "name": step["tool"], "input": step.get("input", {})}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": step["text"]}]
            stop = "end_turn"
        return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                "model": body.get("model") or self.model, "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": max(1, len(json.dumps(messages)) // 4),
                          "output_tokens": max(1, len(json.dumps(content)) // 4),
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}

    def _stream(self, handler: BaseHTTPRequestHandler, reply: dict[str, Any]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        for event, data in sse_events(reply):
            handler.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        handler.wfile.flush()

    def _json(self, handler: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    def _error(self, handler: BaseHTTPRequestHandler, status: int, kind: str,
               message: str) -> None:
        self._json(handler, status, {"type": "error", "error": {"type": kind,
                                                               "message": message}})

    def _not_found(self, handler: BaseHTTPRequestHandler) -> None:
        self._record(handler.path.split("?", 1)[0], {}, {"status": 404},
                     method=handler.command)
        self._error(handler, 404, "not_found_error",
                    f"the course's scripted API serves POST /v1/messages, not "
                    f"{handler.command} {handler.path}")

    def _record(self, path: str, body: dict[str, Any], reply: dict[str, Any], *,
                method: str = "POST") -> None:
        messages = body.get("messages") or []
        entry = {"method": method, "path": path, "model": body.get("model"),
                 "stream": bool(body.get("stream")), "messages": len(messages),
                 "roles": [m.get("role") for m in messages if isinstance(m, dict)],
                 "tools": [t.get("name") for t in body.get("tools") or []
                           if isinstance(t, dict)],
                 "answered": answered_tools(messages), "reply": reply}
        with self._lock:
            self.requests.append(entry)
            if self.log is not None:
                self.log.parent.mkdir(parents=True, exist_ok=True)
                with self.log.open("a") as out:
                    out.write(json.dumps(entry) + "\n")


def sse_events(reply: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events that stream ``reply`` (a whole Messages API message)."""
    head = {**reply, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {**reply["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": head}
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "ping", {"type": "ping"}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta",
                                                    "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": reply["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The requests a :class:`ScriptedAPI` logged to ``path`` (any number of servers)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
