"""How a failed test is worded: one function, for ``make check`` and the course's own checks.

nbgrader's rule decides whether a test cell fails: it raised, or it wrote to stderr (a cell
stopped by the time limit raised). :func:`failure` words the reason in one line, the same
way wherever a test runs: in an nbgrader run (:func:`course.grading.autograde._outcomes`
reads it from the executed notebook) and in the forked checks of the course's tests, which
run an answer's tests in a child of the solution's kernel. Imports nothing: it runs in
kernels too.
"""

from __future__ import annotations

NOT_DONE = "NotImplementedError: the exercise is not done yet (YOUR CODE HERE)"


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
            (:func:`course.grading.references.message`).
    """
    if ename:
        if ename == "NotImplementedError":
            return NOT_DONE
        return f"{ename}: {evalue or ''}".strip().rstrip(":")
    said = next((line for line in stderr.splitlines() if line.strip()), "")
    if stderr.strip():
        return f"the test wrote to stderr, which nbgrader scores 0: {said.strip()[:100]}"
    if delegated:
        return f"GradingCheckFailed: {delegated}"
    return ""
