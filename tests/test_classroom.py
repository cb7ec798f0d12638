"""The classroom package: p**n and its simulation, the crash lab, the explorer, the pictures."""

from __future__ import annotations

import gc
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from course.classroom import (
    CompoundingExplorer,
    CrashLab,
    compounding_figure,
    simulate_curve,
    simulate_success,
    success_rate,
    timeline_figure,
)
from course.classroom.crashlab import sweep_orphans
from course.crash import Attempt, CrashHarness, ScenarioResult

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    return struct.unpack(">II", data[16:24])


# ------------------------------------------------------------------ p ** n
def test_success_rate_is_the_lessons_numbers():
    assert success_rate(0.95, 5) == pytest.approx(0.774, abs=0.0005)
    assert success_rate(0.95, 20) == pytest.approx(0.358, abs=0.0005)
    assert success_rate(0.5, 3) == 0.125
    assert success_rate(0.3, 0) == 1.0
    assert success_rate(1, 50) == 1.0


@pytest.mark.parametrize(("p", "n"), [(0.95, 5), (0.95, 20), (0.9, 10), (0.5, 3), (0.99, 60)])
def test_the_simulation_agrees_with_the_formula(p, n):
    measured = simulate_success(p, n, runs=10_000, seed=0)
    assert abs(measured - p ** n) < 0.02
    assert abs(measured - p * n) > 0.1  # the classic mistake would not pass


def test_the_simulation_is_a_measurement_repeatable_by_seed():
    assert simulate_success(0.95, 20, seed=7) == simulate_success(0.95, 20, seed=7)
    assert simulate_success(0.95, 20, seed=1) != simulate_success(0.95, 20, seed=2)
    # 10 runs can only give a multiple of 1/10: a formula in disguise would not
    assert (simulate_success(0.95, 20, runs=10) * 10).is_integer()
    assert simulate_success(0.0, 1, runs=100) == 0.0
    assert simulate_success(0.7, 0, runs=100) == 1.0


def test_the_curve_is_one_simulation_of_every_length():
    curve = simulate_curve(0.95, 20, runs=5_000, seed=3)
    assert [k for k, _ in curve] == list(range(1, 21))
    assert curve[-1] == (20, simulate_success(0.95, 20, runs=5_000, seed=3))
    values = [v for _, v in curve]
    assert values == sorted(values, reverse=True)  # surviving more steps is never likelier
    assert all(abs(v - 0.95 ** k) < 0.03 for k, v in curve)


@pytest.mark.parametrize(("p", "n", "message"), [
    (1.5, 3, "number from 0 to 1"),
    (-0.1, 3, "number from 0 to 1"),
    (float("nan"), 3, "number from 0 to 1"),
    ("0.95", 3, "number from 0 to 1"),
    (True, 3, "number from 0 to 1"),
    (95, 3, "did you mean 0.95"),
    (0.9, -1, "whole number 0 or more"),
    (0.9, 2.5, "whole number 0 or more"),
    (0.9, "3", "whole number 0 or more"),
])
def test_bad_inputs_are_explained(p, n, message):
    with pytest.raises(ValueError, match=message):
        success_rate(p, n)
    with pytest.raises(ValueError, match=message):
        simulate_success(p, n, runs=10)


def test_simulate_needs_at_least_one_run():
    with pytest.raises(ValueError, match="runs is how many runs"):
        simulate_success(0.9, 3, runs=0)


# ------------------------------------------------------------------ the crash lab
@pytest.fixture(scope="module")
def lab():
    made = CrashLab()
    yield made
    made.close()


def charges(rows):
    return sum(row["charges"] for row in rows)


def test_naive_graph_killed_after_the_charge_charges_twice(lab):
    result = lab.run("charge", "after_effect", graph="naive")
    assert result.killed_at == ("charge", "after_effect")
    assert result.double_charge and result is lab.results[-1]
    assert charges(lab.last_ledger_rows) == 2
    assert [row["idempotency_key"] for row in lab.last_charge_rows] == [None, None]
    assert lab.ledger.value.count("(none)") == 2  # the charges table shows the missing keys
    assert "DOUBLE CHARGE: the resumed run charged again" in lab.verdict.value
    assert "<table>" in lab.ledger.value and "idempotency_key" in lab.ledger.value
    assert png_size(lab.timeline.value)[0] > 500
    assert not lab.button.disabled


def test_keyed_graph_killed_after_the_charge_charges_once(lab):
    before = len(lab.results)
    result = lab.run("charge", "after_effect", graph="keyed")
    assert result.killed_at == ("charge", "after_effect")
    assert len(lab.results) == before + 1
    assert charges(lab.last_ledger_rows) == 1
    assert sum(row["emails"] for row in lab.last_ledger_rows) == 1
    assert result.verdict == "ok"
    (charge,) = lab.last_charge_rows
    assert charge["idempotency_key"] and charge["idempotency_key"] in lab.ledger.value
    assert "ok: one charge, one email" in lab.verdict.value
    assert (lab.node.value, lab.point.value, lab.graph.value) == (
        "charge", "after_effect", "keyed")  # the dropdowns show what ran


def test_the_lab_reuses_one_harness_per_graph(lab):
    harness = lab._harness("naive")
    lab.run("retrieve", "after_checkpoint", graph="naive")
    assert lab.results[-1].killed_at == ("retrieve", "after_checkpoint")
    assert lab._harnesses["naive"] is harness
    assert set(lab._harnesses) <= {"naive", "keyed"}
    assert lab.results[-1].run_dir.parent == lab.root / "naive"


def test_pressing_run_runs_the_chosen_scenario(lab):
    before = len(lab.results)
    lab.node.value, lab.point.value, lab.graph.value = "email", "after_effect", "naive"
    lab.button.click()
    assert len(lab.results) == before + 1
    result = lab.results[-1]
    assert (result.graph, result.node, result.point) == ("naive", "email", "after_effect")
    assert (result.charges, result.emails) == (1, 2)
    assert sum(row["emails"] for row in lab.last_ledger_rows) == 2
    assert "double email" in lab.verdict.value
    assert not lab.button.disabled and "running" not in lab.status.value


def test_while_running_the_button_is_off_and_the_status_says_what_runs(lab, monkeypatch):
    harness = lab._harness("keyed")
    real_run = harness.run
    seen = []

    def watched(*args, **kwargs):
        seen.append((lab.button.disabled, lab.status.value))
        return real_run(*args, **kwargs)

    monkeypatch.setattr(harness, "run", watched)
    lab.run("email", "before_effect", graph="keyed")
    assert seen == [(True, seen[0][1])]
    assert "running: kill at email/before_effect" in seen[0][1]
    assert not lab.button.disabled and "running" not in lab.status.value


def test_a_bad_choice_names_the_good_ones(lab):
    with pytest.raises(ValueError, match="choose one of parse, retrieve, charge, email"):
        lab.run("refund", "after_effect")
    with pytest.raises(ValueError, match="choose one of before_effect"):
        lab.run("charge", "during_lunch")
    with pytest.raises(ValueError, match="choose one of naive, keyed"):
        lab.run("charge", "after_effect", graph="fancy")


def test_a_failing_run_shows_a_message_not_a_traceback(tmp_path):
    def broken(world, checkpointer):
        raise RuntimeError("my graph does not build")

    lab = CrashLab()
    try:
        lab._harnesses["naive"] = CrashHarness(broken, root=tmp_path)
        lab.button.click()  # the worker fails: the verdict says so, the traceback is folded
        assert lab.results[-1].status == "error"
        assert "my graph does not build" in lab.verdict.value
        assert "<details>" in lab.verdict.value
        assert "my graph does not build" in lab.last_error

        def explode(*args, **kwargs):
            raise OSError("disk full")

        lab._harnesses["naive"].run = explode
        lab.button.click()  # the harness itself fails: no exception escapes the button
        assert "the run failed: OSError: disk full" in lab.status.value
        assert "Traceback" not in lab.status.value and "Traceback" in lab.last_error
        assert not lab.button.disabled
    finally:
        lab.close()


def test_controls_are_labelled_for_people_and_browser_tests():
    lab = CrashLab()
    try:
        assert (lab.node.description, lab.point.description, lab.graph.description,
                lab.button.description) == ("node", "crash point", "graph", "Run")
        assert list(lab.node.options) == ["parse", "retrieve", "charge", "email"]
        assert list(lab.point.options) == ["before_effect", "before_record", "after_effect",
                                           "after_writes", "after_checkpoint"]
        assert list(lab.graph.options) == ["naive", "keyed"]
        for widget, name in ((lab.button, "run"), (lab.node, "node"), (lab.point, "point"),
                             (lab.graph, "graph"), (lab.ledger, "ledger"),
                             (lab.verdict, "verdict")):
            assert f"crashlab-{name}" in widget._dom_classes
        bundle = lab._repr_mimebundle_()
        view = bundle["application/vnd.jupyter.widget-view+json"]
        assert view["model_id"] == lab.widget.model_id
    finally:
        lab.close()


def test_the_lab_folder_goes_away_with_the_lab():
    lab = CrashLab()
    lab.run("charge", "before_effect")
    root = lab.root
    assert any(root.iterdir())
    del lab
    gc.collect()
    assert not root.exists()


# ------------------------------------------------------------------ pictures
def fake_result(graph, node, point, attempts, charges, emails):
    return ScenarioResult(graph, node, point, "thread-1", "inv_9", attempts, charges, emails,
                          0, "completed", Path("/nonexistent"))


def all_steps(*nodes):
    return [(n, p) for n in nodes for p in ("before_effect", "after_effect",
                                              "after_checkpoint")]


KILLED_AFTER_CHARGE = Attempt(
    1, "charge/after_effect", "killed",
    [*all_steps("parse", "retrieve"), ("charge", "before_effect"), ("charge", "after_effect")],
    "SIGKILL")


def texts(figure):
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_the_timeline_says_who_charged_again():
    resumed = Attempt(2, "", "completed", all_steps("charge", "email"))
    killed = KILLED_AFTER_CHARGE
    naive = timeline_figure(fake_result("naive", "charge", "after_effect",
                                        [killed, resumed], 2, 1))
    keyed = timeline_figure(fake_result("keyed", "charge", "after_effect",
                                        [killed, resumed], 1, 1))
    assert "charged\nAGAIN" in texts(naive) and "DOUBLE CHARGE" in texts(naive)
    assert "charged\nAGAIN" not in texts(keyed)
    assert "same key:\nno new charge" in texts(keyed) and "ok" in texts(keyed)
    assert texts(naive).count("skipped") == 2  # parse and retrieve did not run again


def test_the_timeline_draws_odd_runs_too(tmp_path):
    timer = Attempt(1, "timer 0.0 ms", "killed", [], "SIGKILL")
    late = Attempt(1, "email/after_checkpoint", "killed", all_steps("parse", "retrieve",
                                                                     "charge", "email"))
    nothing = Attempt(2, "", "completed", [])
    whole = Attempt(2, "", "completed", all_steps("parse", "retrieve", "charge", "email"))
    for attempts in ([timer, whole], [late, nothing]):
        figure = timeline_figure(fake_result("keyed", None, None, attempts, 1, 1))
        figure.savefig(tmp_path / "odd.png")
        assert png_size((tmp_path / "odd.png").read_bytes())[0] == 700


def test_both_pictures_render_to_png(tmp_path):
    resumed = Attempt(2, "", "completed", all_steps("charge", "email"))
    result = fake_result("naive", "charge", "after_effect", [KILLED_AFTER_CHARGE, resumed], 2, 1)
    timeline_figure(result).savefig(tmp_path / "timeline.png")
    compounding_figure(0.95, 20, runs=2_000).savefig(tmp_path / "compounding.png")
    for name, least_wide in (("timeline.png", 600), ("compounding.png", 500)):
        data = (tmp_path / name).read_bytes()
        width, height = png_size(data)
        assert width >= least_wide and 150 <= height <= 400
        assert len(data) > 10_000  # drawn, not blank
    assert timeline_figure(result)._repr_png_()[:8] == PNG_MAGIC


def test_the_compounding_figure_marks_5_and_20_steps():
    figure = compounding_figure(0.95, 20, simulated=True, runs=2_000)
    assert "5 steps: 77%" in texts(figure) and "20 steps: 36%" in texts(figure)
    short = compounding_figure(0.95, 10, simulated=False)
    assert texts(short) == ["5 steps: 77%"]
    (points,) = [line for line in figure.axes[0].lines if line.get_label().startswith("simul")]
    assert len(points.get_xdata()) == 20
    assert not [line for line in short.axes[0].lines if line.get_label().startswith("simul")]


# ------------------------------------------------------------------ the explorer
def test_the_explorer_redraws_when_set_or_slid():
    explorer = CompoundingExplorer(p=0.95, n=20, runs=2_000)
    assert len(explorer.curve) == 20
    assert explorer.curve[4] == (5, pytest.approx(0.774, abs=0.0005))
    assert explorer.curve[19] == (20, pytest.approx(0.358, abs=0.0005))
    assert all(abs(m - c) < 0.04 for (_, m), (_, c) in zip(explorer.simulated, explorer.curve,
                                                          strict=True))
    first_picture = explorer.image.value
    assert first_picture[:8] == PNG_MAGIC

    explorer.set(p=0.9, n=10)
    assert (explorer.p_slider.value, explorer.n_slider.value) == (0.9, 10)
    assert [k for k, _ in explorer.curve] == list(range(1, 11))
    assert explorer.curve[-1][1] == pytest.approx(0.9 ** 10)
    assert len(explorer.simulated) == 10
    assert explorer.image.value != first_picture
    assert "0.900" in explorer.summary.value

    explorer.n_slider.value = 30  # what dragging the slider does
    assert len(explorer.curve) == 30 and math.isclose(explorer.curve[-1][1], 0.9 ** 30)


def test_the_explorer_refuses_bad_values_and_keeps_its_state():
    explorer = CompoundingExplorer(p=0.95, n=20, runs=500)
    with pytest.raises(ValueError, match="number from 0 to 1"):
        explorer.set(p=1.2)
    with pytest.raises(ValueError, match="whole number 1 or more"):
        explorer.set(n=0)
    assert (explorer.p, explorer.n, len(explorer.curve)) == (0.95, 20, 20)
    explorer.set(p=0.3, n=150)  # outside the sliders' first range: the range grows
    assert (explorer.p, explorer.n) == (0.3, 150)
    for widget, name in ((explorer.p_slider, "compounding-p"),
                         (explorer.n_slider, "compounding-n"), (explorer.plot, "compounding-plot")):
        assert name in widget._dom_classes


def test_folders_of_killed_kernels_are_swept(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan = tmp_path / f"crashlab-{gone.pid}-abc"
    mine = tmp_path / f"crashlab-{os.getpid()}-def"
    other = tmp_path / "crashlab-notapid"
    for folder in (orphan, mine, other):
        (folder / "naive").mkdir(parents=True)
    assert sweep_orphans(tmp_path) == [orphan]
    assert not orphan.exists() and mine.exists() and other.exists()
    lab = CrashLab()
    try:
        assert lab.root.name.startswith(f"crashlab-{os.getpid()}-")
    finally:
        lab.close()
    assert not lab.root.exists()


# ------------------------------------------------------------------ the history browser
def test_the_history_browser_shows_the_input_beside_the_empty_input_checkpoint(tmp_path):
    """Step -1 has no values yet ({"log": []} here): the customer's message is the input's
    write record, and the browser shows it there, not only the empty values."""
    from langgraph.checkpoint.memory import InMemorySaver

    from course.classroom import HistoryBrowser
    from course.cloudwave import REFUND_MESSAGE, build_support_graph, support_nodes
    from course.world import World

    world = World(tmp_path)
    graph = build_support_graph(support_nodes(), world=world, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t-input"}}
    graph.invoke({"thread_id": "t-input", "message": REFUND_MESSAGE}, config)
    browser = HistoryBrowser(graph, config)
    first = browser.select(0)
    assert first["step"] == -1 and "message" not in first["values"]
    assert first["input"] == {"thread_id": "t-input", "message": REFUND_MESSAGE}
    assert "input (saved beside this checkpoint" in browser.detail.value
    assert "unused days" in browser.detail.value
    assert all(row["input"] is None for row in browser.rows[1:])
    browser.select(len(browser.rows) - 1)
    assert "input (saved" not in browser.detail.value
    world.close()
