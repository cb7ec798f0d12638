"""A scripted travel agent model that reads the conversation, as a real model would.

:class:`ConversationScriptedModel` is :class:`course.cloudwave.ScriptedChatModel` with
one change: it does not count its own calls (a count dies with the process). On
every call it reads the conversation it is given and replies with the first
scripted tool call that has no successful result in it yet, then with the final
answer. So a fresh process that resumes a thread gets the reply the old one
would have given, and a tool call that was cancelled ("did not complete") is
made again: exactly what a real model may do.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from course.cloudwave.model import ScriptedChatModel


class ConversationScriptedModel(ScriptedChatModel):
    """Replies with the first scripted step whose tool has not yet answered successfully."""

    def _generate(self, messages: list[BaseMessage], stop: Iterable[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self._asked.append(list(messages))
        answered = _tools_answered(messages)
        reply = next((step for step in self.script
                      if not step.tool_calls
                      or any(c["name"] not in answered for c in step.tool_calls)),
                     self.script[-1])
        reply = reply.model_copy(deep=True)
        made = sum(isinstance(m, AIMessage) for m in messages)
        for call in reply.tool_calls:  # a fresh id per attempt, as a real model gives
            call["id"] = f"{call['id']}_{made}"
        reply.response_metadata = {**reply.response_metadata,
                                   "model_version": self.model_version}
        self._position += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _tools_answered(messages: list[BaseMessage]) -> set[str]:
    """Names of tools that returned a result (not an error, not a cancellation)."""
    return {m.name for m in messages
            if isinstance(m, ToolMessage) and m.status != "error" and m.name}


def marta_model(flight_id: str = "VY1042") -> ConversationScriptedModel:
    """Search Madrid → Barcelona on 14 March, book ``flight_id``, then confirm."""
    return ConversationScriptedModel.tool_calls(
        ("search_flights", {"origin": "MAD", "destination": "BCN", "date": "2026-03-14"}),
        ("book_flight", {"flight_id": flight_id}),
        final=f"Marta is booked on {flight_id} to Barcelona.",
    )
