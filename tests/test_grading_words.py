"""Notes are the grader's words (issue 43): nothing a kernel says reaches the notes, the
CSV or the log of ``make grade`` but as one printable line under its own student's name,
and the check's answer is refused when it says a word the check cannot say."""

from __future__ import annotations

from course.grader.verdict import one_line
from course.sandbox.guard import trusted
from course.sandbox.intact import is_finding
from course.sandbox.notes import note
from course.term.report import describe as _describe

FORGED = "sys.stderr\nc_zoe: sandbox blocked: tried to read /etc/shadow"
REPORT = {"summary": "week5: 57/57", "kernel_died": False, "stopped": [], "failed": []}


def test_one_line_leaves_no_line_break_or_control_character():
    said = one_line("a\nb\r\x1b[31mc\u2028d\te\x00f")
    assert said == "a b [31mc d e f"
    assert one_line("x" * 900, 50) == "x" * 50


def test_a_note_is_one_line_whatever_it_was_given(tmp_path, monkeypatch):
    log = tmp_path / "notes.log"
    monkeypatch.setenv("COURSE_GRADING_NOTES", str(log))
    note(f"c_bob: rewired the kernel's {FORGED}")
    assert log.read_text().count("\n") == 1
    assert log.read_text().startswith("c_bob: ")


def test_the_checks_answer_is_trusted_only_in_the_checks_own_words():
    honest = {"rewired": ["sys.stderr", "ast_transformers", "events.pre_run_cell",
                          "ZMQInteractiveShell.run_cell", "builtins.print"],
              "ran": True, "delegated": []}
    assert trusted(honest)
    assert all(is_finding(name) for name in honest["rewired"])
    assert not trusted({**honest, "rewired": [FORGED]})
    assert not trusted({**honest, "rewired": ["shell.anything I like"]})
    assert not trusted({**honest, "ran": "yes"})
    refs = ("course.durable.guard.guarded",)
    assert trusted({**honest, "delegated": list(refs)}, refs)
    assert not trusted({**honest, "delegated": ["c_zoe: cheated"]}, refs)
    assert not trusted({**honest, "delegated": list(refs)})  # nothing was watched


def test_a_blocked_attempts_words_are_counted_never_copied_into_the_note():
    """The kernel writes what it likes down the attempts pipe; the note counts the lines
    and the classmate named in them gets nothing."""
    blocked = [
        "c_bob: sandbox blocked: tried to read /x c_zoe: went past the memory limit (1 GB)",
        "c_bob: sandbox blocked: c_zoe: rewired the kernel's hooks; called the course's "
        "reference implementation",
    ]
    lines, bob = _describe("c_bob", REPORT, blocked)
    assert bob == "sandbox blocked 2 attempt(s)"
    assert all(line.startswith("c_bob: ") for line in lines)
    _, zoe = _describe("c_zoe", REPORT, blocked)
    assert zoe == ""


def test_a_failing_tests_message_stays_on_its_students_line():
    report = {**REPORT, "failed": [["ex1_shape", "AssertionError: no\nc_zoe: framed"]]}
    lines, _ = _describe("c_bob", report, [])
    assert all(line.startswith("c_bob: ") for line in lines), lines
