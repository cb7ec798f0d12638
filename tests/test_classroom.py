"""The classroom package: p**n and its simulation, the crash lab, the explorer, the pictures."""

from __future__ import annotations

import gc
import math
import os
import re
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
        assert list(lab.point.options) == ["before_effect", "after_effect", "after_writes",
                                           "after_checkpoint"]  # the naive graph's charge
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
    """Every label drawn in the axes, line breaks read as spaces (labels wrap to fit)."""
    return [" ".join(t.get_text().split()) for ax in figure.axes for t in ax.texts]


def test_the_timeline_says_who_charged_again():
    resumed = Attempt(2, "", "completed", all_steps("charge", "email"))
    killed = KILLED_AFTER_CHARGE
    naive = timeline_figure(fake_result("naive", "charge", "after_effect",
                                        [killed, resumed], 2, 1))
    keyed = timeline_figure(fake_result("keyed", "charge", "after_effect",
                                        [killed, resumed], 1, 1))
    assert "charged AGAIN" in texts(naive) and "DOUBLE CHARGE" in texts(naive)
    assert "charged AGAIN" not in texts(keyed)
    assert "same key: no new charge" in texts(keyed) and "ok" in texts(keyed)
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


# ------------------------------------------------------------------ the lab's choices
def test_the_point_dropdown_offers_only_the_points_the_node_reaches():
    lab = CrashLab()
    try:
        plain = ("before_effect", "after_effect", "after_writes", "after_checkpoint")
        for node in ("parse", "retrieve", "charge", "email"):
            assert lab.points_for("naive", node) == plain
        assert lab.points_for("keyed", "charge") == ("before_effect", "before_record",
                                                     *plain[1:])
        assert lab.points_for("keyed", "email") == plain
        assert "before_record" not in lab.point.options  # naive graph, charge
        lab.graph.value = "keyed"  # what choosing in the dropdown does
        assert "before_record" in lab.point.options and lab.point.value == "after_effect"
        lab.point.value = "before_record"
        lab.node.value = "email"  # email has no before_record: the next point it has
        assert tuple(lab.point.options) == plain and lab.point.value == "after_effect"
        lab.node.value, lab.point.value = "charge", "before_record"
        lab.graph.value = "naive"
        assert tuple(lab.point.options) == plain and lab.point.value == "after_effect"
        lab.point.value = "after_writes"
        lab.graph.value = "keyed"  # a point the new choice has is kept
        assert lab.point.value == "after_writes"
    finally:
        lab.close()


def test_a_point_the_node_never_reaches_is_refused_not_run():
    with pytest.raises(ValueError, match=re.escape(
            "the naive graph's charge never reaches before_record (only a node that calls "
            "guarded does): choose one of before_effect, after_effect, after_writes, "
            "after_checkpoint")):
        CrashLab(point="before_record")
    lab = CrashLab()
    try:
        with pytest.raises(ValueError, match="naive graph's charge never reaches before_rec"):
            lab.run("charge", "before_record", graph="naive")
        assert lab.results == [] and lab.graph.value == "naive"
        lab.graph.value = "keyed"
        result = lab.run("charge", "before_record")
        assert result.killed_as_armed and result.graph == "keyed"
        assert "keyed graph killed at charge/before_record, then resumed" in lab.status.value
    finally:
        lab.close()


@pytest.mark.slow
def test_every_choice_the_lab_offers_kills_where_it_says_and_draws_cleanly():
    """Each (graph, node, point) the dropdowns offer: the kill lands there, and its timeline's
    labels fit their boxes and meet nothing (a point the node never reached would leave
    a "NOT KILLED" verdict and a status line that says it was killed)."""
    lab = CrashLab()
    try:
        for graph in ("naive", "keyed"):
            for node in lab.node.options:
                for point in lab.points_for(graph, node):
                    result = lab.run(node, point, graph=graph)
                    assert result.killed_as_armed, (graph, node, point, result.verdict)
                    assert f"killed at {node}/{point}" in lab.status.value
                    assert_timeline_labels_fit(timeline_figure(result), (graph, node, point))
    finally:
        lab.close()


# ------------------------------------------------------------------ labels that fit
def drawn(figure):
    """Lay the figure out as the PNG will be, and give the renderer that measured it."""
    figure.canvas.draw()
    return figure.canvas.get_renderer()


def visible_ticklabels(ax, renderer):
    labels = []
    for axis, index in ((ax.xaxis, 0), (ax.yaxis, 1)):
        low, high = sorted(axis.get_view_interval())
        for label in axis.get_ticklabels():
            if label.get_visible() and label.get_text() and \
                    low - 1e-9 <= label.get_position()[index] <= high + 1e-9:
                labels.append((f"tick {label.get_text()!r}", label.get_window_extent(renderer)))
    return labels


def overlapping(named_boxes):
    return [(a, b) for i, (a, box_a) in enumerate(named_boxes)
            for b, box_b in named_boxes[i + 1:] if box_a.overlaps(box_b)]


def inside(box, outer, margin=1.0):
    return (box.x0 >= outer.x0 + margin and box.x1 <= outer.x1 - margin
            and box.y0 >= outer.y0 + margin and box.y1 <= outer.y1 - margin)


def assert_timeline_labels_fit(figure, case):
    renderer = drawn(figure)
    (ax,) = figure.axes
    boxes = [patch.get_window_extent(renderer) for patch in ax.patches]
    labels = [(text.get_text(), text.get_window_extent(renderer)) for text in ax.texts]
    marks = [(f"SIGKILL mark {i}", line.get_window_extent(renderer))
             for i, line in enumerate(ax.lines) if line.get_marker() == "X"]
    for text, box in labels:
        if text.startswith("nothing left to run"):
            assert inside(box, figure.bbox), (case, text)
            continue
        assert any(inside(box, outer, margin=3.0) for outer in boxes), (
            f"{case}: {text!r} is not inside its box with room to spare")
    framing = [("title", ax.title.get_window_extent(renderer)), *visible_ticklabels(
        ax, renderer)]
    assert not overlapping([*labels, *marks, *framing]) or all(
        "SIGKILL" in a and "SIGKILL" in b for a, b in overlapping([*labels, *marks, *framing])
    ), (case, overlapping([*labels, *marks, *framing]))
    for name, box in framing:
        assert inside(box, figure.bbox, margin=0), (case, name)


def assert_callouts_clear(figure, case):
    renderer = drawn(figure)
    (ax,) = figure.axes
    notes = [(t.get_text(), t.get_bbox_patch().get_window_extent(renderer)) for t in ax.texts]
    legend = ax.get_legend().get_window_extent(renderer)
    framing = [("title", ax.title.get_window_extent(renderer)),
               ("x label", ax.xaxis.label.get_window_extent(renderer)),
               ("y label", ax.yaxis.label.get_window_extent(renderer)),
               ("legend", legend), *visible_ticklabels(ax, renderer)]
    plot = ax.get_window_extent(renderer)
    for text, box in notes:
        assert inside(box, plot), f"{case}: the call-out {text!r} leaves the plot"
    clash = overlapping([*notes, *framing])
    assert not clash, f"{case}: {clash}"
    for name, box in framing:
        assert inside(box, figure.bbox, margin=0), (case, name)


def measured(p, n):
    """The explorer's figure at (p, n), its simulated points taken from the formula (the
    layout does not depend on them; simulating 10,000 runs each time would be slow)."""
    return compounding_figure(p, n, [(k, p ** k) for k in range(1, n + 1)], runs=10_000)


def test_dragging_p_keeps_the_20_steps_call_out_off_the_axis():
    """The learners' case: p dragged down, the 20-step value near 0 %, its call-out was
    drawn below the axis over the tick labels."""
    for p in (0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 1.0):
        figure = measured(p, 20)
        assert sorted(texts(figure)) == sorted([f"5 steps: {p ** 5:.0%}",
                                                f"20 steps: {p ** 20:.0%}"])
        assert_callouts_clear(figure, (p, 20))


@pytest.mark.slow
def test_no_call_out_meets_a_label_anywhere_on_the_sliders():
    explorer = CompoundingExplorer(runs=100)
    low, high, step = explorer.p_slider.min, explorer.p_slider.max, explorer.p_slider.step
    every_p = [round(low + i * step, 3) for i in range(round((high - low) / step) + 1)]
    assert every_p[0] == 0.5 and every_p[-1] == 1.0 and len(every_p) == 101
    for p in every_p:
        assert_callouts_clear(measured(p, 20), (p, 20))
    for n in (1, 4, 5, 6, 10, 19, 20, 21, 25, 30, 40, 50, 60, 75, 90, explorer.n_slider.max):
        for p in (0.5, 0.75, 0.95, 0.995, 1.0):
            assert_callouts_clear(measured(p, n), (p, n))
    for p in (0.0, 0.1, 0.3):  # below the slider: explorer.set(p=0.3) widens it
        assert_callouts_clear(measured(p, 20), (p, 20))


def test_timeline_labels_fit_their_boxes_in_odd_scenarios():
    resumed = Attempt(2, "", "completed", all_steps("charge", "email"))
    whole = Attempt(1, "", "completed", all_steps("parse", "retrieve", "charge", "email"))
    paid = Attempt(1, "charge/before_record", "killed",
                   [*all_steps("parse", "retrieve"), ("charge", "before_effect"),
                    ("charge", "before_record")], "SIGKILL")
    cases = {
        "double charge": fake_result("naive", "charge", "after_effect",
                                     [KILLED_AFTER_CHARGE, resumed], 2, 1),
        "everything twice": fake_result("naive", "charge", "after_effect",
                                        [KILLED_AFTER_CHARGE, resumed], 2, 2),
        "never killed": fake_result("naive", "charge", "before_record", [whole], 1, 1),
        "paid, unrecorded": fake_result("keyed", "charge", "before_record", [paid, resumed],
                                        1, 1),
        "an error": ScenarioResult(
            "keyed", "charge", "after_effect", "t", "inv", [KILLED_AFTER_CHARGE, Attempt(
                2, "", "error", [], "Traceback\nRuntimeError: the bank's certificate "
                "expired while the run was resuming")], 1, 0, 0, "error", Path("/x")),
        "five runs": fake_result("keyed", "charge", "after_effect",
                                 [KILLED_AFTER_CHARGE] * 4 + [resumed], 3, 2),
    }
    for name, result in cases.items():
        assert_timeline_labels_fit(timeline_figure(result), name)
    never = timeline_figure(cases["never killed"])
    assert never.axes[0].get_title(loc="left") == (
        "naive graph, armed at charge/before_record, never reached: no kill")
    assert "NOT KILLED" in texts(never)


def test_the_layout_checks_catch_labels_that_collide():
    """The checks above can fail: a label pushed onto a tick label, and one outside its box."""
    figure = measured(0.8, 20)
    ax = figure.axes[0]
    ax.texts[-1].xyann = (-10, -40)  # below the axis, where the old layout put it
    with pytest.raises(AssertionError, match="leaves the plot"):
        assert_callouts_clear(figure, "moved")
    result = fake_result("naive", "charge", "after_effect",
                         [KILLED_AFTER_CHARGE, Attempt(2, "", "completed",
                                                       all_steps("charge", "email"))], 2, 1)
    figure = timeline_figure(result)
    figure.axes[0].texts[0].set_fontsize(30)
    with pytest.raises(AssertionError, match="not inside its box"):
        assert_timeline_labels_fit(figure, "big")


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


# ------------------------------------------------------------------ the pictures at their edges
def line_pixels(figure, colour=(0x1F, 0x5F, 0xA8), tolerance=40) -> int:
    """How many pixels of ``figure`` are drawn in the formula line's colour."""
    import numpy as np

    figure.canvas.draw()
    rgba = np.asarray(figure.canvas.buffer_rgba())[..., :3].astype(int)
    return int((np.abs(rgba - np.array(colour)).sum(axis=2) < tolerance).sum())


def test_at_one_step_the_plot_ticks_whole_steps_and_says_one_step():
    figure = measured(0.95, 1)
    ax = figure.axes[0]
    low, high = ax.get_xlim()
    assert [t for t in ax.get_xticks() if low <= t <= high] == [1], ax.get_xticks()
    assert line_pixels(figure) > 50, "the formula's single point should be drawn"
    explorer = CompoundingExplorer(p=0.95, n=1, runs=200)
    assert "A run of <b>1</b> step at" in explorer.summary.value, explorer.summary.value
    explorer.set(n=2)
    assert "A run of <b>2</b> steps at" in explorer.summary.value


def test_at_a_hundred_steps_the_formula_line_shows_over_the_dots():
    """100 dots used to cover the formula's line; it is now drawn over them."""
    alone = line_pixels(compounding_figure(0.95, 100, simulated=False))
    with_dots = line_pixels(measured(0.95, 100))
    assert with_dots >= 0.8 * alone, (with_dots, alone)


def test_the_crash_labs_stage_colours_are_told_apart():
    """Five stages, five hues: every two at least 25 apart in CIELAB (the old two greens,
    "writes saved" and "checkpointed", were 12 apart; the three yellow-orange shades 16-24)."""
    import itertools
    import math

    from course.classroom.timeline import FILL

    def lab(hex_colour: str) -> tuple[float, float, float]:
        def linear(c: float) -> float:
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = (linear(int(hex_colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
        x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
        y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

        def f(v: float) -> float:
            return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116
        return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))

    assert len(set(FILL)) == 5
    closest = min((math.dist(lab(a), lab(b)), a, b) for a, b in itertools.combinations(FILL, 2))
    assert closest[0] >= 25, closest
    assert all(lab(c)[0] >= 60 for c in FILL), "dark text must stay readable on every fill"
