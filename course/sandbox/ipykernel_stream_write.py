"""The kernel's side of the output limit, on ipykernel's output streams.

What it works around: in a graded kernel ``sys.stdout`` and ``sys.stderr`` are ipykernel's
``OutStream`` objects, which accept every write and queue it for the grader without
bound: a flood fills the kernel's outgoing queue, and its memory, before the grader can
cut it (:mod:`course.sandbox.output_cap`). ipykernel has no output limit to configure,
so :func:`cap_output` assigns each stream's ``write`` (an instance attribute over
``OutStream.write``) a counting wrapper: the write past the limit raises
:class:`OutputLimitExceeded` in its cell. :mod:`course.sandbox.kernel` calls it once the
kernel is set up, before any cell runs.

Written against: ipykernel 7.4.0.
Upstream: no upstream issue; ``OutStream.write`` is public, assigning over it on an
instance is not an API. tests/test_upstream_sandbox.py fails when it changes underneath.

It imports nothing heavy: it runs inside graded kernels.
"""

from __future__ import annotations

from course.sandbox.limits import size_text


class OutputLimitExceeded(Exception):
    """Raised by the kernel's ``print`` in the cell that went past the output limit."""


def cap_output(limit: int, shell) -> None:
    """Make the kernel's ``sys.stdout`` and ``sys.stderr`` count what they are given: the
    write that goes past ``limit`` bytes raises :class:`OutputLimitExceeded` in its cell
    (every later write of that cell too); in later cells writes are dropped. Without it a
    flood fills the kernel's outgoing queue, and its memory, before the grader can cut
    it. ``shell`` is IPython's (its ``execution_count`` tells the cells apart)."""
    import sys

    if limit <= 0:
        return
    state = {"written": 0, "cell": None}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        real = stream.write

        def write(text, _real=real):
            if state["cell"] is not None:
                if state["cell"] == shell.execution_count:
                    raise OutputLimitExceeded(_CUT_MESSAGE.format(size_text(limit)))
                return len(text)
            state["written"] += len(text)
            if state["written"] > limit:
                state["cell"] = shell.execution_count
                raise OutputLimitExceeded(_CUT_MESSAGE.format(size_text(limit)))
            return _real(text)

        stream.write = write


_CUT_MESSAGE = ("this notebook printed past its output limit ({}): the rest of its output "
                "is cut")

