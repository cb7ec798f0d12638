"""``python -m course.audit``: the naive graph's double charge and unkeyed email are reported,
the keyed graph has nothing repeatable, and bad input gets a one-line error."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from course.audit import AuditError, audit
from course.audit.__main__ import main
from course.cloudwave import build_graph, email_keyed, parse, retrieve
from course.cloudwave.nodes import charge_keyed

PYTHON = sys.executable


def test_naive_graph_reports_the_double_charge_and_the_unkeyed_email(capsys):
    assert main(["--graph", "naive"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "effects=2 keyed=0 repeatable=2"
    rows = {row.split()[0]: row for row in lines if row.startswith(("charge", "email"))}
    assert "billing.charge" in rows["charge"] and "(none)" in rows["charge"]
    assert "YES: charge/after_effect" in rows["charge"]
    assert "mail.send" in rows["email"] and "YES: email/after_effect" in rows["email"]


def test_keyed_graph_reports_nothing_repeatable(tmp_path):
    report = audit("keyed", root=tmp_path)
    assert report.summary() == "effects=2 keyed=2 repeatable=0"
    by_node = {e.node: e for e in report.effects}
    assert by_node["charge"].on_resume == "not re-sent"  # the guard's record answered
    assert by_node["email"].on_resume == "receiver replayed"  # the vendor deduplicated
    assert by_node["email"].key == "<thread>:payment_receipt:cus_ada"
    assert not report.problems
    assert all(s.kill_landed for s in report.scenarios)  # 4 nodes x every point, each landed


def _module(tmp_path, monkeypatch, source: str) -> str:
    (tmp_path / "student_graph.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("student_graph", None)
    return "student_graph:build"


def test_a_key_that_changes_on_every_run_is_repeatable(tmp_path, monkeypatch):
    builder = _module(tmp_path, monkeypatch, """
        import uuid
        from course.cloudwave import build_graph, parse, retrieve, email_keyed

        def charge(state, world):
            result = world.billing.charge(customer_id=state["customer_id"],
                invoice_id=state["invoice_id"], cents=state["cents"],
                currency=state["currency"], idempotency_key=str(uuid.uuid4()))
            return {"charge": result, "log": ["charge"]}

        def build(world, checkpointer):
            return build_graph({"parse": parse, "retrieve": retrieve, "charge": charge,
                                "email": email_keyed}, world=world, checkpointer=checkpointer)
    """)
    report = audit(builder, root=tmp_path / "runs")
    charge = next(e for e in report.effects if e.node == "charge")
    assert charge.keyed and charge.repeatable and charge.key_changed
    assert report.summary() == "effects=2 keyed=2 repeatable=1"


@pytest.mark.parametrize(("source", "expected"), [
    (None, "no module named 'no_such_module_here'"),
    ("def build(world, checkpointer):\n    raise KeyError('billing')\n",
     "the builder student_graph:build raised KeyError"),
    ("from course.cloudwave import keyed_graph\n"
     "def build(world, checkpointer):\n    return keyed_graph(world, None)\n",
     "has no checkpointer"),
    ("build = None\n", "has no callable 'build'"),
])
def test_bad_input_gets_one_clear_line(tmp_path, monkeypatch, capsys, source, expected):
    builder = ("no_such_module_here:build" if source is None
               else _module(tmp_path, monkeypatch, source))
    assert main([builder]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and expected in err


def test_cli_last_line_and_errors_in_a_fresh_interpreter(tmp_path):
    done = subprocess.run([PYTHON, "-m", "course.audit", "--graph", "keyed"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "effects=2 keyed=2 repeatable=0"
    bad = subprocess.run([PYTHON, "-m", "course.audit", "nope.nothing:build"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == (
        "error: cannot audit 'nope.nothing:build': no module named 'nope' "
        "(check the spelling, and run it from the module's folder or put that folder on "
        "PYTHONPATH)")


def test_audit_error_is_raised_not_printed_from_python():
    with pytest.raises(AuditError, match="unknown graph"):
        audit("sideways")


def test_the_audit_sees_a_keyed_graph_built_here(tmp_path):
    def build(world, checkpointer):
        return build_graph({"parse": parse, "retrieve": retrieve, "charge": charge_keyed,
                            "email": email_keyed}, world=world, checkpointer=checkpointer)

    assert audit(build, root=tmp_path).summary() == "effects=2 keyed=2 repeatable=0"
