"""How a failed test is worded: one function, for ``make check`` and the course's own checks.

nbgrader's rule decides whether a test cell fails: it raised, or it wrote to stderr (a cell
stopped by the time limit raised). :func:`failure` words the reason in one line, the same
way wherever a test runs: in an nbgrader run (:func:`course.grader.scoring.cell_outcomes`
reads it from the executed notebook) and in the forked checks of the course's tests, which
run an answer's tests in a child of the solution's kernel. Imports nothing
of the course: it runs in kernels too.

:func:`in_cell` and :func:`next_step` word the rest the same way for ``make check`` and the
lab's Validate button (:mod:`course.grader.validate`): a syntax error names the line of the
cell, never the kernel's temporary file (``3058558316.py``), and the first thing to fix is
said first.
"""

from __future__ import annotations

import re

NOT_DONE = "NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"

# How a kernel names a cell in a SyntaxError's message: "(3058558316.py, line 7)", the
# temporary file IPython compiled the cell as (sometimes with its folder).
_TEMP_FILE = re.compile(r"\((?:[^()]*[\\/])?\d+\.py, line (\d+)\)")


def in_cell(evalue: str, cell: str = "the cell") -> str:
    """``evalue`` with the kernel's temporary file name replaced by the line of ``cell``:
    "invalid syntax (3058558316.py, line 7)" → "invalid syntax (line 7 of the cell)"."""
    return _TEMP_FILE.sub(lambda m: f"(line {m.group(1)} of {cell})", evalue or "")


def one_line(text: object, limit: int = 400) -> str:
    """``text`` as one printable line of at most ``limit`` characters: every control or
    separator character (newlines, carriage returns, escape sequences, Unicode line
    separators) becomes a space. What a kernel said can then never start a line of its own
    in the grader's notes, CSV or log (under a classmate's name, say)."""
    import unicodedata

    cleaned = "".join(ch if ch == " " or unicodedata.category(ch)[0] not in "CZ" else " "
                      for ch in str(text))
    return " ".join(cleaned.split())[:limit]


def failure(ename: str | None = None, evalue: str | None = None, stderr: str = "",
            delegated: str = "") -> str:
    """Why a test cell failed, in one line; ``""`` when it did not.

    Args:
        ename, evalue: the error the cell raised (its type's name, its message), if any.
        stderr: what the cell wrote to stderr (nbgrader scores such a cell 0).
        delegated: what the grader's delegation check said, if it failed the cell
            (:func:`course.sandbox.references.message`).
    """
    if ename:
        if ename == "NotImplementedError":
            return NOT_DONE
        return f"{ename}: {in_cell(evalue or '')}".strip().rstrip(":")
    said = next((line for line in stderr.splitlines() if line.strip()), "")
    if stderr.strip():
        return f"the test wrote to stderr, which nbgrader scores 0: {said.strip()[:100]}"
    if delegated:
        return f"GradingCheckFailed: {delegated}"
    return ""


def next_step(exercise: str, message: str, *, answer: bool) -> str:
    """What to do first about ``exercise`` (its heading, e.g. "Exercise 2 — wire the
    graph"), whose answer cell (``answer=True``) or test cell raised ``message`` (a line
    from :func:`failure`)."""
    if message == NOT_DONE:
        return (f"{exercise} is not done yet: in its answer cell, replace "
                "`raise NotImplementedError()` with your code, run that cell, then its "
                "test cell.")
    if answer:
        return (f"{exercise}: its answer cell raised {message}. Fix that cell, run it, "
                "then its test cell.")
    return (f"{exercise}: its test said {message}. Change your answer, run it, then the "
            "test cell again.")
