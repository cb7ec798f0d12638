"""A stand-in ``claude`` program: the Claude Agent SDK's stream-json protocol, offline.

The SDK starts it through ``ClaudeAgentOptions(cli_path=...)`` exactly as it starts
the real Claude Code CLI (see :func:`course.travel.claude.fake_cli`), so the SDK's
own code runs: the control protocol (``initialize``, ``mcp_message``,
``rewind_files``), the message parser, the in-process MCP server, session
options. Only the model is scripted. What it honours:

- ``--resume=<id>`` loads that session's transcript and appends to it;
  with ``--fork-session`` it copies the transcript into a new session instead
  (the original file is not touched); ``--session-id=<id>`` names a new session.
- Transcripts are JSON lines under ``$CLAUDE_CONFIG_DIR/projects/<cwd, sanitised>/
  <session id>.jsonl`` (the layout the SDK's ``get_session_messages`` reads), and
  every line is written before the next step (Claude Code queues its lines and writes
  them every 100 ms: a kill within 100 ms of a step loses it there, not here).
- A resumed session whose last message is a tool call nobody answered gets what Claude
  Code 2.1.332 writes: an error ``tool_result`` ("[Tool call interrupted: ... its outcome
  is unknown ...]") and a synthetic assistant "No response requested.". A ``--resume``
  of a session that does not exist ends with an error result and exit code 1.
- The "model" plays the JSON list in ``$FAKE_CLAUDE_SCRIPT``: steps
  ``{"tool": name, "input": {...}}`` (an ``mcp__server__tool`` is called through
  the SDK; ``Read`` reads and ``Write`` writes ``input.file_path``) and ends with
  ``{"text": ...}``.
  Like a real model it reads the conversation: a tool that already answered
  successfully is not called again; one whose call never got an answer is.
- File checkpointing (``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true``): before a
  ``Write``, the file's content (or its absence) is saved against the current user
  message; ``rewind_files(user_message_id)`` restores every file written since
  that message. Only ``Write`` is tracked; the conversation is never rewound.
- ``--replay-user-messages`` echoes each user message back with its uuid.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

VERSION = "2.1.300 (course fake)"
INTERRUPTED = ("[Tool call interrupted: the session ended before this call's result was "
               "recorded, so its outcome is unknown. Check whether it took effect before "
               "relying on it or running it again.]")
NO_RESPONSE = "No response requested."


class Session:
    """One transcript file, appended line by line."""

    def __init__(self, config_dir: Path, cwd: str, session_id: str) -> None:
        self.id = session_id
        self.folder = config_dir / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"{session_id}.jsonl"
        self.entries: list[dict[str, Any]] = []
        if self.path.exists():
            self.entries = [json.loads(line) for line in self.path.read_text().splitlines()
                            if line.strip()]

    def add(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        entry = {"type": kind, "uuid": str(uuid.uuid4()), "sessionId": self.id,
                 "parentUuid": self.entries[-1]["uuid"] if self.entries else None,
                 "message": message}
        self.entries.append(entry)
        with self.path.open("a") as out:
            out.write(json.dumps(entry) + "\n")
        return entry

    def answered(self) -> set[str]:
        """Names of tools whose call got a successful result in this conversation."""
        names = {}
        done = set()
        for entry in self.entries:
            for block in _blocks(entry):
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result" and not block.get("is_error"):
                    done.add(names.get(block["tool_use_id"], ""))
        return done


class Cli:
    def __init__(self, argv: list[str]) -> None:
        self.flags = _flags(argv)
        self.config_dir = Path(os.environ.get("CLAUDE_CONFIG_DIR", Path.home() / ".claude"))
        self.script = json.loads(os.environ.get("FAKE_CLAUDE_SCRIPT", "[]"))
        self.checkpointing = os.environ.get("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING") == "true"
        self.session: Session | None = None
        self.pending: list[dict[str, Any]] = []
        self.mcp_ready: set[str] = set()
        self.counter = 0
        self.backups: dict[str, dict[str, str | None]] = {}  # user uuid -> {path: old text}
        self.user_uuid = ""

    # ------------------------------------------------------------- wire
    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def receive(self) -> dict[str, Any] | None:
        line = sys.stdin.readline()
        while line and not line.strip():
            line = sys.stdin.readline()
        return json.loads(line) if line else None

    def ask_sdk(self, request: dict[str, Any]) -> dict[str, Any]:
        """A control request to the SDK; other messages that arrive meanwhile wait."""
        self.counter += 1
        request_id = f"cli_req_{self.counter}"
        self.send({"type": "control_request", "request_id": request_id, "request": request})
        while True:
            message = self.receive()
            if message is None:
                raise SystemExit(0)  # the SDK went away (its process was killed)
            response = message.get("response", {})
            if message.get("type") == "control_response" and \
                    response.get("request_id") == request_id:
                if response.get("subtype") == "error":
                    raise RuntimeError(response.get("error", "control request failed"))
                return response.get("response", {})
            self.pending.append(message)

    # ------------------------------------------------------------- loop
    def run(self) -> int:
        resume = self.flags.get("resume")
        if resume and not any((self.config_dir / "projects").glob(f"*/{resume}.jsonl")):
            # as Claude Code does: an error result before anything else, then exit 1
            error = f"No conversation found with session ID: {resume}"
            self.send({**_result("", error, is_error=True), "errors": [error]})
            return 1
        while True:
            message = self.pending.pop(0) if self.pending else self.receive()
            if message is None:
                return 0
            if message.get("type") == "control_request":
                self.answer_control(message)
            elif message.get("type") == "user":
                self.turn(message)

    def answer_control(self, message: dict[str, Any]) -> None:
        request = message["request"]
        reply: dict[str, Any] = {"subtype": "success", "request_id": message["request_id"],
                                 "response": {}}
        try:
            if request["subtype"] == "initialize":
                reply["response"] = {"commands": [], "models": [], "account": {}}
            elif request["subtype"] == "rewind_files":
                self.rewind(request["user_message_id"])
            elif request["subtype"] in ("interrupt", "set_model", "set_permission_mode"):
                pass
            else:
                raise ValueError(f"the course's fake claude does not do {request['subtype']!r}")
        except Exception as error:  # answered as an error, as the real CLI does
            reply = {"subtype": "error", "request_id": message["request_id"], "error": str(error)}
        self.send({"type": "control_response", "response": reply})

    def open_session(self) -> Session:
        resume = self.flags.get("resume")
        if resume and not any((self.config_dir / "projects").glob(f"*/{resume}.jsonl")):
            raise LookupError(f"No conversation found with session ID: {resume}")
        if resume and self.flags.get("fork-session"):
            old = Session(self.config_dir, os.getcwd(), resume)
            new = Session(self.config_dir, os.getcwd(), str(uuid.uuid4()))
            for entry in old.entries:
                new.entries.append({**entry, "sessionId": new.id})
            new.path.write_text("".join(json.dumps(e) + "\n" for e in new.entries))
            session = new
        else:
            session_id = resume or self.flags.get("session-id") or str(uuid.uuid4())
            session = Session(self.config_dir, os.getcwd(), session_id)
        if resume:
            self.close_dangling_calls(session)
        return session

    def close_dangling_calls(self, session: Session) -> None:
        """Answer calls the last process never answered, as Claude Code 2.1.332 does: an error
        result saying the outcome is unknown, then a synthetic "No response requested."."""
        last = session.entries[-1] if session.entries else None
        calls = [b["id"] for b in _blocks(last)
                 if b.get("type") == "tool_use"] if last and last["type"] == "assistant" else []
        if not calls:
            return
        session.add("user", {"role": "user", "content": [
            {"type": "tool_result", "content": INTERRUPTED, "is_error": True,
             "tool_use_id": call} for call in calls]})
        session.add("assistant", {
            "id": str(uuid.uuid4()), "type": "message", "role": "assistant",
            "model": "<synthetic>", "content": [{"type": "text", "text": NO_RESPONSE}],
            "stop_reason": "stop_sequence", "usage": {"input_tokens": 0, "output_tokens": 0}})

    def turn(self, user: dict[str, Any]) -> None:
        if self.session is None:
            try:
                self.session = self.open_session()
            except LookupError as error:
                self.send(_result("", str(error), is_error=True))
                return
            self.send({"type": "system", "subtype": "init", "session_id": self.session.id,
                       "uuid": str(uuid.uuid4()), "claude_code_version": VERSION,
                       "cwd": os.getcwd(), "model": "scripted", "tools": ["Read", "Write"],
                       "mcp_servers": [], "permissionMode": "default",
                       "apiKeySource": "none"})
        session = self.session
        entry = session.add("user", user["message"])
        self.user_uuid = entry["uuid"]
        if "replay-user-messages" in self.flags:
            self.send({"type": "user", "uuid": entry["uuid"], "session_id": session.id,
                       "message": user["message"], "parent_tool_use_id": None})
        turns = 0
        for step in self.script:
            if "tool" not in step or step["tool"] in session.answered():
                continue
            turns += 1
            call = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}",
                    "name": step["tool"], "input": step.get("input", {})}
            self.say([call])
            text, is_error = self.call_tool(call)
            result = {"role": "user", "content": [{"type": "tool_result",
                      "tool_use_id": call["id"], "content": text, "is_error": is_error}]}
            session.add("user", result)
            self.send({"type": "user", "uuid": session.entries[-1]["uuid"],
                       "session_id": session.id, "message": result,
                       "parent_tool_use_id": None})
        final = next((s["text"] for s in self.script if "text" in s), "Done.")
        self.say([{"type": "text", "text": final}])
        self.send(_result(session.id, final, turns=turns + 1))

    def say(self, content: list[dict[str, Any]]) -> None:
        message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
                   "model": "scripted", "content": content, "stop_reason": None,
                   "usage": {"input_tokens": 0, "output_tokens": 0}}
        entry = self.session.add("assistant", message)
        self.send({"type": "assistant", "uuid": entry["uuid"], "session_id": self.session.id,
                   "message": message, "parent_tool_use_id": None})

    # ------------------------------------------------------------- tools
    def call_tool(self, call: dict[str, Any]) -> tuple[str | list[dict[str, Any]], bool]:
        name = call["name"]
        if name == "Write":
            return self.write(call["input"])
        if name == "Read":
            return self.read(call["input"])
        if name.startswith("mcp__"):
            _, server, tool = name.split("__", 2)
            if server not in self.mcp_ready:
                self.mcp(server, "initialize", {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "claude-code", "version": VERSION}})
                self.mcp(server, "notifications/initialized", None)
                self.mcp_ready.add(server)
            answer = self.mcp(server, "tools/call", {"name": tool, "arguments": call["input"]})
            if "error" in answer:
                return answer["error"].get("message", "tool failed"), True
            result = answer.get("result", {})
            blocks = [{"type": "text", "text": c.get("text", "")}
                      for c in result.get("content", []) if c.get("type") == "text"]
            return blocks, bool(result.get("isError"))  # kept as blocks, as Claude Code does
        return f"No such tool available: {name}", True

    def mcp(self, server: str, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            self.counter += 1
            message.update(id=self.counter, params=params)
        reply = self.ask_sdk({"subtype": "mcp_message", "server_name": server,
                              "message": message})
        return reply.get("mcp_response", {})

    def read(self, args: dict[str, Any]) -> tuple[str, bool]:
        path = Path(args["file_path"])
        if not path.exists():
            return f"File does not exist: {path}", True
        lines = path.read_text().splitlines()
        return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1)), False

    def write(self, args: dict[str, Any]) -> tuple[str, bool]:
        path = Path(args["file_path"])
        if self.checkpointing:
            saved = self.backups.setdefault(self.user_uuid, {})
            if str(path) not in saved:
                saved[str(path)] = path.read_text() if path.exists() else None
            self._save_backups()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"])
        return f"File written: {path}", False

    def rewind(self, user_message_id: str) -> None:
        if not self.checkpointing:
            raise RuntimeError("file checkpointing is not enabled for this session")
        self._load_backups()
        order = [e["uuid"] for e in self.session.entries if e["type"] == "user"] \
            if self.session else []
        if user_message_id not in order:
            raise ValueError(f"no user message {user_message_id} in this session")
        restore: dict[str, str | None] = {}
        for later in order[order.index(user_message_id):]:
            for path, old in self.backups.get(later, {}).items():
                restore.setdefault(path, old)
        for path, old in restore.items():
            if old is None:
                Path(path).unlink(missing_ok=True)
            else:
                Path(path).write_text(old)

    def _backup_file(self) -> Path:
        return self.config_dir / "file-history" / f"{self.session.id}.json"

    def _save_backups(self) -> None:
        self._backup_file().parent.mkdir(parents=True, exist_ok=True)
        self._backup_file().write_text(json.dumps(self.backups))

    def _load_backups(self) -> None:
        if self.session and self._backup_file().exists():
            self.backups = json.loads(self._backup_file().read_text())


def _blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = entry.get("message", {}).get("content")
    return content if isinstance(content, list) else []


def _result(session_id: str, text: str, *, turns: int = 1, is_error: bool = False) -> dict:
    return {"type": "result", "subtype": "error_during_execution" if is_error else "success",
            "duration_ms": 0, "duration_api_ms": 0, "is_error": is_error, "num_turns": turns,
            "session_id": session_id, "result": text, "total_cost_usd": 0.0,
            "uuid": str(uuid.uuid4())}


def _flags(argv: list[str]) -> dict[str, Any]:
    """``--name=value``, ``--name value`` and bare ``--name`` flags, by name."""
    flags: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if eq:
                flags[name] = value
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                flags[name] = argv[i + 1]
                i += 1
            else:
                flags[name] = True
        i += 1
    return flags


def main(argv: list[str] | None = None) -> int:
    try:
        return Cli(sys.argv[1:] if argv is None else argv).run()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
