"""The grader's side of the output limit: nothing kept past it, the cell that passed it
stopped.

The kernel's own ``print`` counts what it writes (:mod:`course.sandbox.
ipykernel_stream_write`), but a notebook can display without printing (rich displays, a
rewired ``print``). :class:`OutputCap` counts every output as it reaches the grader
(nbclient's ``output``, a public method): once the notebook's outputs pass the limit
(:attr:`course.sandbox.limits.Limits.output`), nothing but errors is kept, and the cell
that passed it is interrupted and fails with :data:`~course.sandbox.limits.OUTPUT_CUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nbclient import NotebookClient
from nbclient.util import ensure_async
from nbformat import NotebookNode

from course.sandbox.limits import OUTPUT_CUT, Limits


class OutputCap(NotebookClient):
    """nbclient's executor within the notebook's output limit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reset_output_cap(Limits())

    def reset_output_cap(self, limits: Limits) -> None:
        """A new notebook, within ``limits``: nothing counted yet."""
        self._limits = limits
        self._output_bytes = 0
        self._cut: set[int] = set()  # cells whose output went past the output limit

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's, within the output limit: once the notebook's outputs pass it,
        nothing but errors is kept; the cell that passed it is interrupted and fails
        with :data:`~course.sandbox.limits.OUTPUT_CUT`."""
        limit = self._limits.output
        if not limit or msg.get("msg_type") == "error":
            return super().output(outs, msg, display_id, cell_index)
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + sum(
            len(str(v)) for v in (content.get("data") or {}).values())
        if self._output_bytes + size <= limit:
            self._output_bytes += size
            return super().output(outs, msg, display_id, cell_index)
        if not self._cut:  # the cell that went past it: stop it (the flood costs no more)
            self._cut.add(cell_index)
            self._output_bytes = limit + 1
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().create_task(
                    ensure_async(self.km.interrupt_kernel()))
        return None

    def mark_cut(self, cell: NotebookNode, cell_index: int) -> None:
        """The output limit's mark on the cell that went past it."""
        if cell_index in self._cut and not any(
                o.get("ename") == OUTPUT_CUT for o in cell.get("outputs", [])):
            cell.outputs.append(NotebookNode({
                "output_type": "error", "ename": OUTPUT_CUT,
                "evalue": f"this cell printed past the notebook's "
                          f"{self._limits.says('output')}: the rest of its output was cut "
                          "and the cell was stopped",
                "traceback": [f"{OUTPUT_CUT}: printed past the {self._limits.says('output')}"]}))
