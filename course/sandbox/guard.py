"""The grader's half of the test guard: test cells a notebook cannot neuter (always on).

Every graded kernel starts through :mod:`course.sandbox.kernel`, which snapshots the
hooks a notebook could rewire (:mod:`course.sandbox.intact`). Before and after every test
cell, :class:`TestGuard` asks the kernel, through a channel no transformer sees (a
``user_expressions`` request), to put them back and to prove it did (a secret only the
grader and the untouched check know). A test cell that did not run to its last line,
that ran while something rewired the kernel, or whose check gave no valid proof, is
graded as failed, with a message saying why; rewiring is named on the student's row
(:func:`course.sandbox.notes.note`). While the test cells of an exercise that declares a
reference run, the check also watches whether the notebook's answers call it
(:mod:`course.sandbox.references`): those cells fail too.

:class:`course.sandbox.execute.GradingExecute` runs every test cell through
:meth:`TestGuard.run`.
"""

from __future__ import annotations

import ast
import os
import secrets
import time
from pathlib import Path
from queue import Empty

from nbclient import NotebookClient
from nbclient.util import ensure_async
from nbformat import NotebookNode

from course.grader.declaration import load
from course.grader.week import DeclarationError, Week
from course.sandbox.intact import is_finding, proof
from course.sandbox.notes import note
from course.sandbox.references import message

CHECK_TIMEOUT_S = 5


def is_test(cell: NotebookNode) -> bool:
    """An autograded test cell (nbgrader: graded, no solution)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and meta.get("grade") and not meta.get("solution")


def week_of(resources: dict | None) -> int | None:
    """The week nbgrader is grading (its assignment ``weekN``), if it is one."""
    assignment = str(((resources or {}).get("nbgrader") or {}).get("assignment") or "")
    return int(assignment[4:]) if assignment.startswith("week") and assignment[4:].isdigit() \
        else None


def declared_week(config, resources: dict | None, student: str) -> Week | None:
    """The declaration (:mod:`course.grader.declaration`) of the week being graded, from
    the course folder nbgrader grades in (``CourseDirectory.root``, else the working
    folder); None, with a note on the student's row, when it cannot be read."""
    week = week_of(resources)
    if week is None:
        return None
    root = config.get("CourseDirectory", {}).get("root") if config else None
    try:
        return load(week, Path(root if isinstance(root, str) and root else os.getcwd()),
                    check=False)
    except DeclarationError as error:
        note(f"{student}: answers calling the course's references are not detected: {error}")
        return None


def answer_sources(nb) -> list[str]:
    """The source of every answer cell (nbgrader: a solution) of ``nb``."""
    return [c.source for c in nb.cells if c.cell_type == "code"
            and c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def with_marker(source: str, line: str) -> str | None:
    """``source`` with ``line`` after its last statement, or None where that would change
    what the cell does: its last statement is an expression (its value is the cell's
    result, which nbgrader reads as partial credit), or it is not plain Python."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # an IPython magic, or a student's syntax error in a test cell
        return None
    if body and isinstance(body[-1], ast.Expr):
        return None
    return f"{source}\n{line}"


def failed_check(cell: NotebookNode, why: str) -> None:
    """Make ``cell`` fail (an error output), unless it already failed."""
    if any(o.get("output_type") == "error" for o in cell.outputs):
        return
    cell.outputs.append(NotebookNode({
        "output_type": "error", "ename": "GradingCheckFailed", "evalue": why,
        "traceback": [f"GradingCheckFailed: {why}"]}))


def trusted(answer: dict, references: tuple[str, ...] = ()) -> bool:
    """Whether a proved answer of the kernel's check says only what the check can say:
    each finding one of :func:`course.sandbox.intact.is_finding`'s fixed names, each
    delegation one of the references watched, ``ran`` a bool or None. A forged answer
    (made by a notebook that read the secret) is refused, so its words never reach the
    notes."""

    rewired, delegated = answer.get("rewired"), answer.get("delegated")
    return (isinstance(rewired, list) and all(isinstance(n, str) and is_finding(n)
                                              for n in rewired)
            and isinstance(delegated, list) and all(isinstance(n, str) and n in references
                                                    for n in delegated)
            and answer.get("ran") in (True, False, None))


class TestGuard:
    """The grader's half of :mod:`course.sandbox.intact`, for one kernel."""

    def __init__(self, executor: NotebookClient, name: str, secret: str, student: str,
                 week: Week | None = None, answers: list[str] | None = None) -> None:
        self.executor, self.name, self.secret, self.student = executor, name, secret, student
        self.week, self.answers = week, answers or []
        self.rewired: dict[str, None] = {}
        self.silent = False  # the kernel stopped answering checks: ask no more
        self.watched: tuple[str, ...] = ()  # the references the check watches meanwhile

    async def ask(self, marker: str | None, nonce: str,
                  watch: tuple[list[str], list[str]] | None = None) -> dict | None:
        """The kernel's check, proved; None when it gave no valid answer."""
        if self.silent:
            return None
        kc, km = self.executor.kc, self.executor.km
        expression = f"__import__('sys').{self.name}({nonce!r}, {marker!r}, {watch!r})"
        msg_id = kc.execute("", silent=True, store_history=False,
                            user_expressions={"check": expression})
        deadline = time.monotonic() + CHECK_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                msg = await ensure_async(kc.shell_channel.get_msg(timeout=0.5))
            except Empty:
                if not await ensure_async(km.is_alive()):
                    break
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            found = msg["content"].get("user_expressions", {}).get("check", {})
            try:
                answer = ast.literal_eval(found["data"]["text/plain"])
                if answer["proof"] == proof(self.secret, nonce, answer["rewired"],
                                            answer["ran"], answer["delegated"]) \
                        and trusted(answer, self.watched):
                    return answer
            except (KeyError, TypeError, ValueError, SyntaxError):
                pass
            return None
        self.silent = True
        return None

    async def run(self, cell: NotebookNode, execute) -> NotebookNode:
        """Run test ``cell`` with the kernel's hooks put back before, checked after, and
        its exercise's references watched (:mod:`course.sandbox.references`)."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        exercise = self.week.exercise_of(grade_id) if self.week else None
        refs = exercise.references if exercise else ()
        own = [c.source for c in self.executor.nb.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
               in exercise.answers] if refs else []
        self.watched = ()
        before = await self.ask(None, secrets.token_hex(16),
                                (list(refs), self.answers, own) if refs else None)
        self.watched = tuple(refs)
        if before:
            self.rewired.update(dict.fromkeys(before["rewired"]))
        nonce, marker = secrets.token_hex(16), f"_grading_ran_{secrets.token_hex(6)}"
        source = cell.source
        marked = with_marker(source, f"{marker} = {nonce[:16]!r}")
        cell.source = marked or source
        marker = marker if marked else None
        try:
            result = await execute()
        finally:
            cell.source = source
        after = await self.ask(marker, nonce)
        if after is None:
            failed_check(cell, "the grader could not check that this test ran (the kernel "
                               "did not answer its check, or answered it falsely)")
        elif after["rewired"]:
            failed_check(cell, "something rewired the kernel while this test ran ("
                               + ", ".join(after["rewired"]) + ")")
            self.rewired.update(dict.fromkeys(after["rewired"]))
        elif marker and not after["ran"]:
            failed_check(cell, "this test did not run to its end: something in the "
                               "notebook changed how cells run")
        if after and after["delegated"]:
            failed_check(cell, message(after["delegated"]))
            note(f"{self.student}: exercise {exercise.number} calls the course's "
                 f"reference {', '.join(after['delegated'])}: scored 0")
        return result

    def report(self) -> None:
        if self.rewired:
            note(f"{self.student}: rewired the kernel's " + ", ".join(self.rewired)
                 + " (put back before each test)")

