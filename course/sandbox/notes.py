"""The student's row: who a graded kernel grades, and the grader's one-line notes on it.

Every part of the sandbox that has something to say about a student (the test guard, a
limit the kernel went past, an attempt the walls blocked) says it through :func:`note`,
as one printable line under the student's name, in the file ``COURSE_GRADING_NOTES``
names (``make grade`` puts those lines on the student's row and in its log).
"""

from __future__ import annotations

import os
from pathlib import Path

from course.grader.verdict import one_line


def student_of(cwd: str | os.PathLike | None) -> str:
    """The student a kernel grades, from its working folder ``.../autograded/<student>/<wk>``."""
    parts = Path(cwd or ".").parts
    return parts[-2] if len(parts) >= 3 and parts[-3] == "autograded" else "?"


def note(line: str) -> None:
    """One line for the student's row (``COURSE_GRADING_NOTES``), if grading keeps notes."""
    notes = os.environ.get("COURSE_GRADING_NOTES")
    if notes:
        with open(notes, "a") as out:
            out.write(one_line(line, 1000) + "\n")
