"""An approval panel: Approve / Reject (with a reason) for a thread that waits for a person.

Promises:
- :class:`ApprovalPanel` shows what the paused run asks (the interrupt's value),
  a reason box and two buttons. A button press resumes the thread with
  ``Command(resume={"approved": ..., "reason": ...})``.
- The same actions are plain Python: :meth:`ApprovalPanel.approve` and
  :meth:`ApprovalPanel.reject` return the state after the resume, and
  ``panel.decisions`` keeps every decision taken (``{"approved", "reason",
  "thread_id"}``). Grade those, not the widgets.
- A rejection without a reason, or a decision on a thread that is not waiting,
  is a one-line ``ValueError`` (a button shows it in the status line instead)
  and resumes nothing.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
from langgraph.types import Command


class ApprovalPanel(widgets.VBox):
    def __init__(self, graph: Any, config: dict[str, Any]) -> None:
        self.graph, self.config = graph, config
        self.decisions: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self.question = widgets.HTML()
        self.reason = widgets.Text(placeholder="reason (needed to reject)", description="reason")
        self.approve_button = widgets.Button(description="Approve", button_style="success")
        self.reject_button = widgets.Button(description="Reject", button_style="danger")
        self.status = widgets.HTML()
        self.approve_button.on_click(lambda _b: self._press(True))
        self.reject_button.on_click(lambda _b: self._press(False))
        super().__init__([self.question, self.reason,
                          widgets.HBox([self.approve_button, self.reject_button]), self.status])
        self._show()

    @property
    def waiting(self) -> list[Any]:
        """The values of the interrupts the thread is waiting on (empty: not waiting)."""
        return [i.value for i in self.graph.get_state(self.config).interrupts]

    def approve(self, reason: str = "") -> dict[str, Any]:
        return self._decide(True, reason)

    def reject(self, reason: str) -> dict[str, Any]:
        return self._decide(False, reason)

    def _decide(self, approved: bool, reason: str) -> dict[str, Any]:
        if not self.waiting:
            raise ValueError("this thread is not waiting for a decision")
        if not approved and not reason.strip():
            raise ValueError("a rejection needs a reason the customer can be told")
        decision = {"approved": approved, "reason": reason.strip(),
                    "thread_id": self.config["configurable"]["thread_id"]}
        self.decisions.append(decision)
        self.result = self.graph.invoke(
            Command(resume={"approved": approved, "reason": decision["reason"]}), self.config)
        self._show()
        return self.result

    def _press(self, approved: bool) -> None:
        try:
            self._decide(approved, self.reason.value)
        except ValueError as error:
            self.status.value = f"<span style='color:#b71c1c'>{html.escape(str(error))}</span>"

    def _show(self) -> None:
        waiting = self.waiting
        for button in (self.approve_button, self.reject_button):
            button.disabled = not waiting
        if waiting:
            asked = waiting[0]
            text = asked.get("question", str(asked)) if isinstance(asked, dict) else str(asked)
            lines = asked.get("will_send", []) if isinstance(asked, dict) else []
            self.question.value = (f"<b>{html.escape(text)}</b>" + "".join(
                f"<br>• {html.escape(str(line))}" for line in lines))
            self.status.value = "waiting for a decision"
        else:
            self.question.value = "<i>nothing is waiting</i>"
            last = self.decisions[-1] if self.decisions else None
            self.status.value = ("" if last is None else
                                 f"{'approved' if last['approved'] else 'rejected'}"
                                 f"{': ' + html.escape(last['reason']) if last['reason'] else ''}")
