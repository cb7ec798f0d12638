"""A scripted chat model: a real LangChain ``BaseChatModel`` that needs no network.

It returns a fixed sequence of ``AIMessage`` objects (with tool calls if you
script them), supports ``bind_tools`` (returning itself, so agents that bind
tools work: Deep Agents, ``create_agent``), and records every list of messages
it was asked about in ``asked`` so a lesson can show what the "model" saw.

It also carries a ``model_version`` string, stamped on every reply's
``response_metadata``, so replay lessons can detect a model that changed
underneath a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr


class ScriptExhausted(RuntimeError):
    """The model was asked more times than it has replies."""


class ScriptedChatModel(BaseChatModel):
    """Replies with ``script[0]``, then ``script[1]``, … One reply per call."""

    script: list[AIMessage] = Field(default_factory=list)
    model_version: str = "scripted-1"
    _position: int = PrivateAttr(default=0)
    _asked: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @classmethod
    def tool_calls(cls, *calls: tuple[str, dict[str, Any]], final: str = "Done.",
                   **kwargs: Any) -> ScriptedChatModel:
        """A model that calls each ``(tool, args)`` in turn, then answers ``final``."""
        script = [
            AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{i}"}])
            for i, (name, args) in enumerate(calls, start=1)
        ]
        return cls(script=[*script, AIMessage(content=final)], **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def asked(self) -> list[list[BaseMessage]]:
        return self._asked

    @property
    def position(self) -> int:
        return self._position

    def rewind(self, position: int = 0) -> None:
        """Start the script again at ``position`` (a resumed process starts fresh too)."""
        self._position = position

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Iterable[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self._asked.append(list(messages))
        if self._position >= len(self.script):
            raise ScriptExhausted(
                f"the scripted model has {len(self.script)} replies and was asked for "
                f"reply {self._position + 1}; add replies to its script"
            )
        reply = self.script[self._position].model_copy(deep=True)
        reply.response_metadata = {**reply.response_metadata,
                                   "model_version": self.model_version}
        self._position += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])
