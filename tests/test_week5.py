"""Week 5: the notebooks, the nbgrader pipeline and ``make check``.

The shared suite (``tests/weeks.py``'s ``week_suite``): ONE nbgrader run grades the solution,
the known-wrong answers, and a keyless charge whose student also tampered with the tests,
keeping its course folder (the freshly generated release and the executed solution are
checked too), while ``make check WEEK=5`` runs on the untouched release and a tiny week
whose notebooks loop or die is graded in the background. Exercise 4's and 7's tests use
exercise 2's and 3's answers, so the wrong answers are grouped by :func:`_rounds` (no two in
a notebook share a cell or an expected failure), not one per exercise.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from weeks import (
    NBGRADER_WARNINGS,
    REPO,
    Wrong,
    cells,
    grade_in_a_process,
    nbgrader_cell,
    release_of,
    replacing,
    reports_of,
    source_of,
    tiny_course,
    week_suite,
)

from course.classroom.lab import first_notebook
from course.grading import autograde as grading
from course.grading.checks import (
    DiesAfter,
    NotPortable,
    Spy,
    in_fresh_interpreter,
    kill_self,
    perturbed,
    portable_source,
    run_forked,
)

SOURCE, RELEASE = source_of(5), release_of(5)
pytestmark = NBGRADER_WARNINGS
# a charge without a key fails every test that re-runs it or looks for its key
KEYLESS_CHARGE_FAILS = {"ex2_test_resume_does_not_double_charge", "ex4_lost_200_is_reconciled",
                        "ex4_not_landed_or_in_flight", "ex7_kill_after_charge",
                        "ex7_kill_anywhere"}


# ------------------------------------------------------------ the notebooks
def test_the_customers_test_is_there_by_name():
    sources = [c.source for c in cells(RELEASE)]
    assert any("def test_resume_does_not_double_charge():" in s for s in sources)


def test_nbgrader_config_points_at_solutions_and_the_repo_root():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "."
    assert config.ExecutePreprocessor.timeout > 0
    assert config.OverwriteCells.add_missing_cells is True


def test_make_lab_opens_the_first_week_that_exists():
    weeks = sorted(REPO.glob("week[1-6]/*.ipynb"))
    assert RELEASE in weeks
    assert first_notebook() == weeks[0]


# ------------------------------------------------------ the checks helpers
def _keyed(state):
    return f"{state['thread_id']}:charge:{state['invoice_id']}"


def _salted(state):
    return f"{state['thread_id']}:{hash(state['invoice_id'])}"


def _clocked(state):
    import time

    return f"{state['thread_id']}:{int(time.time())}"


WORLD_LIKE = object()


def _reads_a_live_object(state):
    return str(WORLD_LIKE)


def test_in_fresh_interpreter_catches_a_key_that_depends_on_the_process():
    state = {"thread_id": "t1", "invoice_id": "inv_9"}
    assert in_fresh_interpreter(_keyed, state, hash_seed=1) == _keyed(state)
    assert in_fresh_interpreter(_salted, state, hash_seed=1) != in_fresh_interpreter(
        _salted, state, hash_seed=2)
    with pytest.raises(NotPortable, match="WORLD_LIKE"):
        portable_source(_reads_a_live_object)


def _notebook_namespace(*sources: str) -> dict:
    """A namespace as IPython leaves it: each cell executed, its source in ``In`` and in
    linecache (where ``inspect.getsource`` finds a cell's functions)."""
    import linecache

    namespace = {"In": ["", *sources], "__name__": "__main__"}
    for number, source in enumerate(sources, 1):
        filename = f"<test-cell-{number}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_in_fresh_interpreter_reruns_the_notebook_code_so_a_per_process_salt_changes():
    cells = _notebook_namespace(
        "import os, uuid\nSALT = uuid.uuid4().hex[:8]\nPID = os.getpid()\nPREFIX = 'cw'",
        "def salted(state):\n    return f\"{PREFIX}:{state['thread_id']}:{SALT}\"",
        "def by_pid(state):\n    return f\"{state['thread_id']}:{PID}\"",
        "def honest(state):\n    return f\"{PREFIX}:{state['thread_id']}:charge\"")
    state = {"thread_id": "t1"}
    assert "SALT = uuid.uuid4().hex[:8]" in portable_source(cells["salted"])
    assert in_fresh_interpreter(cells["salted"], state) != cells["salted"](state)
    assert in_fresh_interpreter(cells["by_pid"], state) != cells["by_pid"](state)
    assert in_fresh_interpreter(cells["honest"], state) == cells["honest"](state) == "cw:t1:charge"


def test_perturbed_moves_every_clock_in_the_calling_thread_only():
    import datetime
    import threading
    import time
    from time import perf_counter

    namespace = {"perf_counter": perf_counter}

    def readings():
        return (int(time.time()), time.time_ns() // 10**9, int(time.monotonic()),
                time.monotonic_ns() // 10**9, int(time.perf_counter()),
                int(namespace["perf_counter"]()), time.strftime("%Y%m%d%H"), time.ctime(),
                time.asctime(), time.localtime().tm_yday, time.gmtime().tm_yday,
                datetime.datetime.now().isoformat()[:13],
                datetime.datetime.utcnow().isoformat()[:13],
                datetime.datetime.today().isoformat()[:13], datetime.date.today().isoformat())

    seen = {}
    for seed in (1, 2):
        with perturbed(namespace, seed=seed):
            seen[seed] = readings()
            elsewhere = []
            other = threading.Thread(target=lambda box=elsewhere: box.append(time.monotonic()))
            other.start()
            other.join()
        assert abs(elsewhere[0] - time.monotonic()) < 60  # other threads keep real time
    assert all(a != b for a, b in zip(seen[1], seen[2], strict=True)), seen
    assert namespace["perf_counter"] is perf_counter and time.perf_counter is perf_counter


def test_perturbed_moves_the_clock_and_the_dice_and_puts_them_back():
    import time
    import uuid

    state = {"thread_id": "t1", "invoice_id": "inv_9"}
    with perturbed(seed=1):
        a, u1 = _clocked(state), uuid.uuid4()
    with perturbed(seed=2):
        b, u2 = _clocked(state), uuid.uuid4()
    assert a != b and u1 != u2
    assert abs(time.time() - __import__("datetime").datetime.now().timestamp()) < 5
    with perturbed(seed=1):
        k1 = _keyed(state)
    with perturbed(seed=2):
        assert _keyed(state) == k1


def test_run_forked_reports_a_real_sigkill_and_the_proxies_work(world):
    assert run_forked(kill_self) == "SIGKILL"
    assert run_forked(lambda: None) == "exit 0"
    spy = Spy(world.billing)
    spy.find_by_key("nothing-here")
    assert spy.called("find_by_key") == 1 and spy.called("charge") == 0
    dying = DiesAfter(world.webhook, "post")
    assert run_forked(lambda: dying.post("e", {"invoice_id": "inv_9"})) == "SIGKILL"
    assert len(world.webhook.deliveries()) == 1  # it landed, then the process died


# ------------------------------------------------------------ make check CLI
def test_check_explains_bad_input_and_grades_nothing(capsys, tmp_path):
    assert grading.main(["--week", "9"]) == 2
    assert "there is no week 9" in capsys.readouterr().err
    assert grading.main(["--week", "5", "--submission", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "other.ipynb").write_text("{}")
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 2
    assert "has no week5.ipynb (it has: other.ipynb)" in capsys.readouterr().err
    (tmp_path / "week5.ipynb").write_text('{"cells": [')  # a file broken half-way
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 2
    assert "is not a readable notebook" in capsys.readouterr().err


# ------------------------------------------------------ the nbgrader pipeline
def _keyless_and_tampered(source: Path, target: Path) -> Path:
    """The solution, except that ``charge`` sends no idempotency key, and the student also
    tried to hide it: the customer's test was edited to pass and the kill test deleted."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "ex2_charge":
            keyed = ", idempotency_key=charge_key(state))"
            assert keyed in cell.source
            cell.source = cell.source.replace(keyed, ")")
        elif grade_id == "ex2_test_resume_does_not_double_charge":
            cell.source = "print('all good')"
    nb.cells = [c for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") != "ex7_kill_after_charge"]
    target.mkdir(parents=True)
    nbformat.write(nb, target / "week5.ipynb")
    return target


# ------------------------------------------------------------ known-wrong answers
def _prepend(lines: str, old: str, new: str):
    """An edit: ``lines`` on top of the cell, and ``old`` replaced by ``new``."""
    swap = replacing(old, new)
    return lambda source: lines + "\n\n\n" + swap(source)


KEY = "    return f\"{state['thread_id']}:charge:{state['invoice_id']}\""
EMAIL_KEY = "    return f\"{state['thread_id']}:{template}:{state['customer_id']}\""
CHARGE_CALL = "currency=state[\"currency\"], idempotency_key=charge_key(state))"
RECONCILE = (
    "    answer = charge(state, world)[\"charge\"]"
    "  # the same key and parameters as the first try\n"
    "    return {\"charge\": answer, \"reconciled\": answer[\"replayed\"], \"log\": [\"charge\"]}")
BUSY = """    from course.world import KeyInUse

    try:
        answer = charge(state, world)["charge"]
    except KeyInUse:
{handling}
    return {{"charge": answer, "reconciled": answer["replayed"], "log": ["charge"]}}"""
GUARD_CALL = """    try:
        result = fn(**args, idem_key=key)
    except Exception as error:
        if getattr(error, "effect_landed", None) is False:
            store.clear(rid)  # a definite refusal: nothing happened, nothing to reconcile
        raise  # anything else: the outcome is unknown, the intent stays in flight"""
RELAY = """    for row in pending:
        webhook.post(row["event"], json.loads(row["payload"]), idempotency_key=row["id"])
        with transaction(conn):
            conn.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (row["id"],))"""
NODES = ('    nodes = {"parse": parse, "retrieve": retrieve, "charge": charge, '
         '"email": email}')

# name: Wrong(exercise, edits of the solution, the test cells of its exercise it must
# fail). Each is a mistake students make; the name starts with its exercise.
WRONG_ANSWERS = {
    # the course's own implementations, called instead of written (course/grading/references.py)
    "ex3_calls_the_courses_email": Wrong(3, {"ex3_email": lambda old: old + (
        "\n\nimport course.cloudwave.nodes as _nodes\n\n\n"
        "def email(state, world):\n    return _nodes.email_keyed(state, world)\n")},
        {"ex3_one_refund_mail", "ex3_email_keys"}),
    "ex5_calls_the_courses_guarded": Wrong(5, {"ex5_guarded": (
        "from course.durable import guarded as _theirs\n\n\n"
        "def guarded(session_id, step, fn, args, *, store):\n"
        "    return _theirs(session_id, step, fn, args, store=store)\n")},
        {"ex5_intent_before_result_after", "ex5_real_kill_needs_reconcile",
         "ex5_key_passed_downstream", "ex5_refusal_mismatch_and_empty_result"}),
    # a key must be the same in a genuinely new process that re-runs the code
    "ex2_salted_key": Wrong(2, {"ex2_charge": _prepend(
        "import uuid\n\nKEY_SALT = uuid.uuid4().hex[:8]  # one per deployment",
        KEY, KEY[:-1] + ":{KEY_SALT}\"")}, {"ex2_key_same_in_new_process"}),
    # "no clock" means every clock, not only time.time
    "ex2_hourly_key": Wrong(2, {"ex2_charge": _prepend(
        "import time", KEY, KEY[:-1] + ":{int(time.monotonic() // 3600)}\"")},
        {"ex2_key_has_no_time_or_randomness"}),
    # two invoices of the same amount for one customer in one thread
    "ex2_amount_key": Wrong(2, {"ex2_charge": replacing(
        KEY, "    return f\"{state['thread_id']}:{state['customer_id']}:{state['cents']}"
        "{state['currency']}\"")}, {"ex2_keys_never_collide"}),
    # the invoice's own currency
    "ex2_usd_only": Wrong(2, {"ex2_charge": replacing(
        CHARGE_CALL, "currency=\"usd\", idempotency_key=charge_key(state))")},
        {"ex2_keys_never_collide"}),
    # a key on every money tool
    "ex2_keyless_refund": Wrong(2, {"ex2_refund_and_pause": replacing(
        ",\n        idempotency_key=f\"{state['thread_id']}:refund:{state['invoice_id']}\")",
        ")")}, {"ex2_every_money_tool_keyed"}),
    # the same template in two conversations is two mails
    "ex3_key_without_thread": Wrong(3, {"ex3_email": replacing(
        EMAIL_KEY, "    return f\"{template}:{state['customer_id']}\"")}, {"ex3_email_keys"}),
    "ex3_dated_key": Wrong(3, {"ex3_email": _prepend(
        "from datetime import date", EMAIL_KEY, EMAIL_KEY[:-1] + ":{date.today()}\"")},
        {"ex3_email_keys"}),
    # Stripe has no lookup by key (what the lesson used to teach)
    "ex4_find_by_key": Wrong(4, {"ex4_reconcile": replacing(RECONCILE, """\
    landed = world.billing.find_by_key(charge_key(state))
    if landed is not None:
        return {"charge": landed, "reconciled": True, "log": ["charge"]}
    return {**charge(state, world), "reconciled": False}""")}, {"ex4_lost_200_is_reconciled"}),
    # an answer made up while the first call is in flight
    "ex4_made_up_answer": Wrong(4, {"ex4_reconcile": replacing(RECONCILE, BUSY.format(handling=(
        "        answer = {\"id\": \"pending\", \"status\": \"captured\", \"replayed\": True}"
    )))}, {"ex4_not_landed_or_in_flight"}),
    # "nothing yet" returned while the first call is in flight
    "ex4_none_when_busy": Wrong(4, {"ex4_reconcile": replacing(RECONCILE, BUSY.format(handling=(
        "        return {\"charge\": None, \"reconciled\": False, \"log\": [\"charge\"]}"
    )))}, {"ex4_not_landed_or_in_flight"}),
    # a new key when the first one is busy
    "ex4_new_key_when_busy": Wrong(4, {"ex4_reconcile": replacing(RECONCILE, BUSY.format(handling=(
        "        answer = world.billing.charge(\n"
        "            customer_id=state[\"customer_id\"], invoice_id=state[\"invoice_id\"],\n"
        "            cents=state[\"cents\"], currency=state[\"currency\"],\n"
        "            idempotency_key=charge_key(state) + \":retry\")"
    )))}, {"ex4_not_landed_or_in_flight"}),
    # the guard as first taught: nothing decided when fn raises (and no argument check)
    "ex5_no_refusal_handling": Wrong(5, {"ex5_guarded": replacing(
        GUARD_CALL, "    result = fn(**args, idem_key=key)")},
        {"ex5_refusal_mismatch_and_empty_result"}),
    # "done" taken to mean "has a truthy result"
    "ex5_truthy_done": Wrong(5, {"ex5_guarded": replacing(
        'if record.status == "done":', "if record.result:")},
        {"ex5_refusal_mismatch_and_empty_result"}),
    # every error clears the intent, timeouts included
    "ex5_clears_on_any_error": Wrong(5, {"ex5_guarded": replacing(
        '        if getattr(error, "effect_landed", None) is False:\n',
        "        if error:\n")}, {"ex5_refusal_mismatch_and_empty_result"}),
    # a guard key salted with the process id
    "ex5_pid_in_key": Wrong(5, {"ex5_guarded": replacing(
        "    key = idem_key(session_id, step, args)",
        "    import os\n\n    key = f\"{idem_key(session_id, step, args)[:16]}-{os.getpid()}\"")},
        {"ex5_key_passed_downstream"}),
    # the relay marks every pending message, also one queued while it ran
    "ex6_marks_all_pending": Wrong(6, {"ex6_outbox": replacing(RELAY, """    for row in pending:
        webhook.post(row["event"], json.loads(row["payload"]), idempotency_key=row["id"])
    with transaction(conn):
        conn.execute("UPDATE outbox SET status = 'sent' WHERE status = 'pending'")""")},
        {"ex6_kill_between_post_and_mark"}),
    # marked all at the end: a failure part-way leaves the posted ones pending
    "ex6_marks_at_the_end": Wrong(6, {"ex6_outbox": replacing(RELAY, """    posted = []
    for row in pending:
        webhook.post(row["event"], json.loads(row["payload"]), idempotency_key=row["id"])
        posted.append(row["id"])
    with transaction(conn):  # everything posted, marked in one go
        for message_id in posted:
            conn.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (message_id,))""")},
        {"ex6_kill_between_post_and_mark"}),
    # marked before it is posted
    "ex6_marks_before_posting": Wrong(6, {"ex6_outbox": replacing(RELAY, """    for row in pending:
        with transaction(conn):
            conn.execute("UPDATE outbox SET status = 'sent' WHERE id = ?", (row["id"],))
        webhook.post(row["event"], json.loads(row["payload"]), idempotency_key=row["id"])""")},
        {"ex6_kill_between_post_and_mark"}),
    # the course's nodes instead of the student's own
    "ex7_course_nodes": Wrong(7, {"ex7_graph": replacing(NODES, """\
    from course.cloudwave import charge_keyed, email_keyed

    nodes = {"parse": parse, "retrieve": retrieve,
             "charge": charge_keyed, "email": email_keyed}""")},
        {"ex7_kill_anywhere"}),
    # the receipt before the charge
    "ex7_email_first": Wrong(7, {"ex7_graph": replacing(NODES, (
        '    nodes = {"parse": parse, "retrieve": retrieve, "email": email, "charge": charge}'))},
        {"ex7_kill_anywhere"}),
    # the checkpointer it was given is dropped
    "ex7_no_checkpointer": Wrong(7, {"ex7_graph": replacing(
        "build_graph(nodes, world=world, checkpointer=checkpointer)",
        "build_graph(nodes, world=world)")}, {"ex7_kill_after_charge", "ex7_kill_anywhere"}),
}


def _rounds() -> dict[str, list[str]]:
    """The wrong answers grouped so that none in a notebook edits the same cell or is
    expected to fail the same test as another: each failed test then points at exactly one
    wrong answer, and a few notebooks grade all of them. (Not one per exercise: exercise 4's
    and 7's tests use exercise 2's and 3's answers.)"""
    rounds: list[list[str]] = []

    def apart(a: str, b: str) -> bool:
        return not (set(WRONG_ANSWERS[a].edits) & set(WRONG_ANSWERS[b].edits)
                    or WRONG_ANSWERS[a].fails & WRONG_ANSWERS[b].fails)

    for name in WRONG_ANSWERS:
        spot = next((r for r in rounds if all(apart(name, m) for m in r)), None)
        if spot is None:
            spot = []
            rounds.append(spot)
        spot.append(name)
    return {f"wrong{number}": names for number, names in enumerate(rounds, 1)}


globals().update(week_suite(
    week=5, exercises=7, total=57, written=[2, 2, 2], wrongs=WRONG_ANSWERS, groups=_rounds,
    at_least=0,  # exercise 1 has no known-wrong answers yet
    # the keyless charge, and a tiny week whose notebooks loop forever or kill their kernel
    more_submissions=lambda root: {"keyless": _keyless_and_tampered(SOURCE, root / "keyless")},
    more_jobs=lambda root: {"tiny": grade_in_a_process(9, *_tiny_week(root / "tiny"),
                                                       timeout_s=3)},
    demos=["naive graph, kill at charge/after_effect: 2 charge(s)",
           "keyed graph, kill at charge/after_effect: 1 charge(s)",
           "test_resume_does_not_double_charge passed"],
    said={"ex4_none_when_busy": "returned no charge (None)",
          "ex6_marks_at_the_end": "a second time"},
    secrets=["in_fresh_interpreter", "Four nodes write to the outside world"],
))


@pytest.mark.slow
def test_a_charge_without_a_key_loses_every_test_that_repeats_it(pipeline):
    """Even with the visible test edited and the kill test deleted: nbgrader puts both back."""
    keyless = pipeline["reports"]["keyless"]
    assert {t.grade_id for t in keyless.failed()} == KEYLESS_CHARGE_FAILS
    lost = sum(t.points for t in keyless.tests if t.grade_id in KEYLESS_CHARGE_FAILS)
    assert keyless.earned == 57 - lost == 39
    said = "\n".join(keyless.lines())
    assert "the second run made a new charge" in said
    assert "2 charges for inv_9 after the kill and resume" in said


def _tiny_week(root: Path) -> tuple[dict[str, Path], Path]:
    """A one-exercise course, week 9 (an answer cell and two test cells), and two
    submissions: one whose answer loops forever, one that kills its own kernel."""
    tiny_course(root, 9, [
        nbgrader_cell("def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION",
                      solution=True, grade_id="answer"),
        nbgrader_cell("# Exercise 1, visible test\nassert answer() == 42", grade=True,
                      locked=True, points=1, grade_id="uses_answer"),
        nbgrader_cell("# Exercise 1, another test\nassert 1 + 1 == 2", grade=True, locked=True,
                      points=1, grade_id="independent"),
    ])
    nb = nbformat.read(root / "solutions" / "week9" / "week9.ipynb", as_version=4)
    folders = {}
    for name, answer in [("looping", "def answer():\n    while True:\n        pass"),
                         ("dying", "import os\nos._exit(3)\ndef answer():\n    return 42")]:
        nb.cells[0].source = answer
        (root / name).mkdir()
        nbformat.write(nb, root / name / "week9.ipynb")
        folders[name] = root / name
    return folders, root


@pytest.mark.slow
def test_a_looping_or_dying_notebook_gets_a_clear_message_and_grading_goes_on(pipeline):
    reports = reports_of(pipeline["tiny"])
    stuck = reports["looping"]
    assert stuck["summary"] == "week9: 1/2"  # the cell after the stopped one still ran
    assert list(stuck["failed"]) == ["uses_answer"]
    failed = stuck["failed"]["uses_answer"]
    assert failed["timed_out"]
    assert "ran for more than 3 seconds and was stopped" in failed["message"]
    said = "\n".join(stuck["lines"])
    assert "TIME LIMIT" in said and "loop that never ends" in said

    dead = reports["dying"]
    assert dead["kernel_died"] and dead["summary"] == "week9: 0/2"
    assert "KERNEL DIED" in "\n".join(dead["lines"])


def test_make_check_without_a_week_grades_every_week_and_ends_with_a_total(monkeypatch, capsys):
    """The summary arithmetic of ``make check`` with no WEEK (nbgrader itself is stubbed here:
    the pipeline tests above grade for real)."""
    def fake_grading(week, folder, args):
        tests = [grading.CellResult(f"t{week}", "ex", 4, 4 if week == 5 else 1, "")]
        return {"student": grading.Report(week=week, student="student", submission=folder,
                                          tests=tests)}

    monkeypatch.setattr(grading, "weeks_with_notebooks", lambda repo=REPO: [1, 5])
    monkeypatch.setattr(grading, "_graded", fake_grading)
    assert grading.main([]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-3:] == ["week1: 1/4", "week5: 4/4", "total: 5/8"]
    assert 5 in grading.weeks_with_notebooks()


@pytest.mark.slow
def test_make_check_tells_a_learner_whose_answer_calls_the_courses_guarded(tmp_path, capsys):
    """A learner's own run: exercise 5 handed to course.durable.guarded scores 0 and
    ``make check`` says why, once, besides the failed tests' messages."""
    nb = nbformat.read(SOURCE, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
              == "ex5_guarded"]
    cell.source = ("from course.durable import guarded as _theirs\n\n\n"
                   "def guarded(session_id, step, fn, args, *, store):\n"
                   "    return _theirs(session_id, step, fn, args, store=store)\n")
    nbformat.write(nb, tmp_path / "week5.ipynb")
    assert grading.main(["--week", "5", "--submission", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    line = "note: exercise 5 calls the course's reference course.durable.guard.guarded: scored 0"
    assert out.count(line) == 1, out[-2000:]
    assert "your answer calls course.durable.guard.guarded" in out
