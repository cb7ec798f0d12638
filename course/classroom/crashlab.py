"""The crash lab: pick a node and a crash point, kill the graph there, resume, read the ledger.

Promises:
- :class:`CrashLab` shows three dropdowns (node, crash point, graph) and a Run
  button. The crash point dropdown offers only the points the chosen graph's chosen
  node really reaches (``before_record`` only where a node calls ``guarded``: the keyed
  graph's ``charge``), read from one unkilled run of each graph
  (:meth:`CrashLab.points_for`); choosing another node or graph updates it, keeping the
  point when the new node has it and otherwise taking the next one it has.
  Below them: a status line, a one-line verdict, the ledger (and the charges with
  their keys) as :class:`course.base.table.Table` HTML, and a timeline picture of the
  last run (:func:`course.classroom.timeline.timeline_figure`).
- :meth:`CrashLab.run` is the button in plain Python: it runs one scenario with
  :class:`course.crash.CrashHarness` (real SIGKILL in a forked worker, resume in
  another), updates the widgets and returns the
  :class:`~course.crash.ScenarioResult`. ``lab.results`` keeps every result,
  ``lab.last_ledger_rows`` the ledger rows of the last one: grade those, not the
  widgets (headless, widget output is not readable from the kernel).
- One harness per graph kind, reused across runs; every run directory lives in
  one temporary folder that is removed with the lab (garbage collection,
  :meth:`CrashLab.close`, or the end of the kernel). The folder's name carries
  the process id, so a new lab also removes the folders of kernels that were
  killed before they could clean up.
- Bad choices raise a ``ValueError`` that names the valid ones (a point the node
  never reaches included: a kill there could never land); pressing Run never shows a
  traceback: the error is a short message in the status line.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import tempfile
import time
import traceback
import weakref
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course.base.crashpoints import POINTS
from course.base.table import Table
from course.classroom._render import png_bytes
from course.classroom.timeline import timeline_figure
from course.cloudwave.graph import LINEAR_FLOW
from course.crash import CrashHarness, ScenarioResult
from course.durable.lease import process_alive
from course.world import World

NODES = LINEAR_FLOW  # parse, retrieve, charge, email
GRAPHS = ("naive", "keyed")
GOOD, BAD, QUIET = "#1b5e20", "#b71c1c", "#555555"
PREFIX = "crashlab-"  # + "<pid>-<random>": the temporary folder of one lab


def _choose(value: Any, options: tuple[str, ...], what: str) -> str:
    if value not in options:
        raise ValueError(f"unknown {what} {value!r}: choose one of {', '.join(options)}")
    return value


def verdict_line(result: ScenarioResult) -> str:
    """The verdict in words, e.g. ``DOUBLE CHARGE: the resumed run charged again``."""
    if result.status == "error":
        return result.verdict
    if result.status != "completed":
        return f"LOST: the run did not finish after {len(result.attempts)} attempts"
    said = []
    if result.double_charge:
        said.append("the resumed run charged again")
    if result.double_email:
        said.append("the resumed run emailed again")
    if result.lost:
        said.append("the run finished without its charge or its email")
    counts = (f"{_words(result.charges)} charge{'s' * (result.charges != 1)}, "
              f"{_words(result.emails)} email{'s' * (result.emails != 1)}")
    if said:
        return f"{result.verdict}: {'; '.join(said)} ({counts})"
    return f"{result.verdict}: {counts}"


def _words(count: int) -> str:
    return {0: "no", 1: "one", 2: "two", 3: "three"}.get(count, str(count))


def sweep_orphans(directory: str | Path | None = None) -> list[Path]:
    """Remove the lab folders whose process is gone (a kernel killed, not shut down)."""
    removed = []
    for folder in Path(directory or tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        if folder.is_dir() and pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _cleanup(folder: tempfile.TemporaryDirectory, controls: list[widgets.Widget]) -> None:
    for control in controls:
        with contextlib.suppress(Exception):
            control.close()
    with contextlib.suppress(OSError):
        folder.cleanup()


class CrashLab:
    """Kill a CloudWave graph at a chosen point, resume it, and show what the ledger says."""

    def __init__(self, node: str = "charge", point: str = "after_effect",
                 graph: str = "naive") -> None:
        node, point, graph = self._named(node, point, graph)
        sweep_orphans()
        self._folder = tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-")
        self.root = Path(self._folder.name)
        self._harnesses: dict[str, CrashHarness] = {}
        self._reaches: dict[str, dict[str, tuple[str, ...]]] = {}
        try:
            self._reachable(node, point, graph)
        except ValueError:
            self._folder.cleanup()
            raise
        self.results: list[ScenarioResult] = []
        self.last_ledger_rows: list[dict[str, Any]] = []
        self.last_charge_rows: list[dict[str, Any]] = []
        self.last_error: str | None = None  # the full traceback of the last failed run

        self.node = widgets.Dropdown(options=NODES, value=node, description="node")
        self.point = widgets.Dropdown(options=self.points_for(graph, node), value=point,
                                      description="crash point")
        self.graph = widgets.Dropdown(options=GRAPHS, value=graph, description="graph")
        for dropdown in (self.node, self.point, self.graph):
            dropdown.layout = widgets.Layout(width="230px")
            dropdown.style = {"description_width": "initial"}
        self.button = widgets.Button(description="Run", icon="play", button_style="warning",
                                     tooltip="kill the graph at this point, resume, "
                                     "and read the ledger")
        self.status = widgets.HTML(_span("choose a node and a crash point, then press Run",
                                         QUIET))
        self.verdict = widgets.HTML()
        self.ledger = widgets.HTML()
        self.timeline = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.timeline_box = widgets.Box([self.timeline])
        for control, name in ((self.node, "node"), (self.point, "point"), (self.graph, "graph"),
                              (self.button, "run"), (self.status, "status"),
                              (self.verdict, "verdict"), (self.ledger, "ledger"),
                              (self.timeline_box, "timeline")):
            control.add_class(f"crashlab-{name}")
        self.ledger.add_class("jp-RenderedHTMLCommon")  # JupyterLab's table style
        self.widget = widgets.VBox([
            widgets.HBox([self.node, self.point, self.graph, self.button]),
            self.status, self.verdict, self.ledger, self.timeline_box])

        me = weakref.ref(self)  # the button must not keep the lab (and its folder) alive

        def on_click(_button: widgets.Button) -> None:
            lab = me()
            if lab is not None:
                lab._press()

        self.button.on_click(on_click)

        def on_choice(_change: object) -> None:
            lab = me()
            if lab is not None:
                lab._offer_points()

        self.node.observe(on_choice, names="value")
        self.graph.observe(on_choice, names="value")
        controls = [self.node, self.point, self.graph, self.button, self.status, self.verdict,
                    self.ledger, self.timeline, self.timeline_box, self.widget]
        self._finalizer = weakref.finalize(self, _cleanup, self._folder, controls)

    # ------------------------------------------------------------------ plain Python
    def run(self, node: str | None = None, point: str | None = None,
            graph: str | None = None) -> ScenarioResult:
        """Kill the ``graph`` at ``node``/``point``, resume it, show and return the result.

        A choice left out is taken from the dropdowns (what the Run button does).
        """
        node, point, graph = self._reachable(node or self.node.value,
                                             point or self.point.value,
                                             graph or self.graph.value)
        self.graph.value, self.node.value = graph, node  # each offers its points
        self.point.value = point
        self.button.disabled = True
        self.status.value = _span(f"running: kill at {node}/{point} ({graph} graph), "
                                  "then resume\u2026", QUIET)
        started = time.perf_counter()
        try:
            result = self._harness(graph).run(node, point)
            ledger_rows, charge_rows, tables = _read_world(result.run_dir)
            self.results.append(result)
            self.last_ledger_rows, self.last_charge_rows = ledger_rows, charge_rows
            self._show(result, tables, time.perf_counter() - started)
        except Exception as error:
            self.last_error = traceback.format_exc()
            self.status.value = _span(f"the run failed: {type(error).__name__}: {error}", BAD)
            raise
        finally:
            # Only once everything is drawn: a click before that would look like a finished
            # lab while the kernel is still busy, and could run with a stale dropdown value.
            self.button.disabled = False
        return result

    def close(self) -> None:
        """Close the widgets and delete every run directory now."""
        self._finalizer()

    def points_for(self, graph: str, node: str) -> tuple[str, ...]:
        """The crash points ``graph``'s ``node`` reaches, in the order a run reaches them.

        Read once per graph from an unkilled run of it (a kill at a point the node never
        reaches could never land)."""
        graph, node = _choose(graph, GRAPHS, "graph"), _choose(node, NODES, "node")
        if graph not in self._reaches:
            reached = set(self._harness(graph).run().attempts[0].reached)
            self._reaches[graph] = {n: tuple(p for p in POINTS if (n, p) in reached)
                                    for n in NODES}
        return self._reaches[graph][node]

    # ------------------------------------------------------------------ widget side
    def _press(self) -> None:
        try:
            self.run()
        except Exception as error:  # shown in the status line; the traceback is in last_error
            self.last_error = traceback.format_exc()
            self.status.value = _span(f"the run failed: {type(error).__name__}: {error}", BAD)

    def _offer_points(self) -> None:
        """Offer the points of the chosen graph's chosen node; keep the chosen point when
        it is one of them, else take the next one the node reaches (the last, at worst)."""
        offered = self.points_for(self.graph.value, self.node.value)
        if tuple(self.point.options) == offered:
            return
        chosen = self.point.value
        later = [p for p in offered if POINTS.index(p) >= POINTS.index(chosen)] \
            if chosen in POINTS else []
        self.point.options = offered  # (this selects the first option)
        if offered:
            self.point.value = chosen if chosen in offered else (later or offered[-1:])[0]

    def _harness(self, graph: str) -> CrashHarness:
        if graph not in self._harnesses:
            self._harnesses[graph] = CrashHarness(graph, root=self.root / graph)
        return self._harnesses[graph]

    def _show(self, result: ScenarioResult, tables: str, seconds: float) -> None:
        trouble = not result.verdict.startswith("ok")
        line = html.escape(verdict_line(result))
        self.verdict.value = (f"<b style='color:{BAD if trouble else GOOD};font-size:1.1em'>"
                              f"{line}</b>")
        if result.status == "error":
            self.last_error = result.attempts[-1].detail
            self.verdict.value += ("<details><summary>worker traceback</summary><pre>"
                                   f"{html.escape(self.last_error)}</pre></details>")
        self.ledger.value = tables
        self.timeline.value = png_bytes(timeline_figure(result))
        where = f"{result.node}/{result.point}"
        what = (f"killed at {where}, then resumed" if result.killed_as_armed
                else f"armed at {where}, but the run never got there: no kill")
        self.status.value = _span(  # last: the status line says "done" only when it is
            f"scenario {len(self.results)}: {result.graph} graph {what} "
            f"({len(result.attempts)} worker runs, {seconds:.2f} s)", QUIET)

    @staticmethod
    def _named(node: Any, point: Any, graph: Any) -> tuple[str, str, str]:
        return (_choose(node, NODES, "node"), _choose(point, POINTS, "crash point"),
                _choose(graph, GRAPHS, "graph"))

    def _reachable(self, node: Any, point: Any, graph: Any) -> tuple[str, str, str]:
        node, point, graph = self._named(node, point, graph)
        offered = self.points_for(graph, node)
        if point not in offered:
            why = " (only a node that calls guarded does)" if point == "before_record" else ""
            raise ValueError(f"the {graph} graph's {node} never reaches {point}{why}: "
                             f"choose one of {', '.join(offered)}")
        return node, point, graph

    def _repr_mimebundle_(self, **kwargs: Any):
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"CrashLab({len(self.results)} runs, last: " + (
            self.results[-1].verdict if self.results else "none") + ")"


def _read_world(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The ledger rows, the charge rows, and both tables as HTML."""
    world = World(run_dir)
    try:
        ledger = world.ledger().table()
        charges = world.charges_table().rows
    finally:
        world.close()
    shown = Table([{**row, "idempotency_key": row["idempotency_key"] or "(none)"}
                   for row in charges], ["id", "invoice_id", "cents", "currency",
                                         "idempotency_key"], title="charges")
    return ledger.rows, charges, ledger._repr_html_() + shown._repr_html_()


def _span(text: str, colour: str) -> str:
    return f"<span style='color:{colour}'>{html.escape(text)}</span>"
