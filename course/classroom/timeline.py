"""A picture of one crash scenario: which node ran in which run, and where the kill hit.

:func:`timeline_figure` draws a :class:`course.crash.ScenarioResult` as a grid:
one row per attempt (run 1 is the one that was killed, run 2 the resume, …),
one column per node in graph order. Each cell shows how far the node got in
that run, from the points the worker reached (``attempt.reached``):

- started (``before_effect``), provider answered but the guard has not
  recorded it (``before_record``), effect done but nothing saved
  (``after_effect``), write record saved (``after_writes``), done and
  checkpointed (``after_checkpoint``);
- a dashed cell: the node did not run because an earlier run checkpointed it;
- a red X: where the SIGKILL hit;
- a node whose effect already happened in an earlier run and happens again is
  outlined in red ("charged AGAIN") when the ledger holds more than one such
  effect, or marked as deduplicated when the ledger holds one.

The ledger counts (charges, emails) and the verdict are in the heading. The
figure is a plain matplotlib Figure, so ``figure.savefig("x.png")`` works headless.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch

from course.classroom._render import new_figure
from course.cloudwave.graph import LINEAR_FLOW
from course.crash import Attempt, ScenarioResult

STAGES = ("before_effect", "before_record", "after_effect", "after_writes", "after_checkpoint")
# started / provider answered, guard not told / ran, not saved / writes saved / checkpointed
FILL = ("#fbe7a1", "#f8c77e", "#f5a65b", "#b9e0a5", "#8fd19e")
STAGE_WORDS = ("started", "paid, unrecorded", "ran, not saved", "writes saved", "done")
EFFECT_WORDS = {"charge": ("charges", "charged"), "email": ("emails", "emailed")}
OUTCOME_WORDS = {"killed": "killed", "completed": "completed",
                 "needs_reconcile": "stopped: reconcile", "retry": "key busy: retry",
                 "error": "error"}
RED, GREY, INK = "#c62828", "#9e9e9e", "#222222"
HALF = 0.42  # half the width of a cell


def _nodes(result: ScenarioResult) -> list[str]:
    seen = [n for a in result.attempts for n, _ in a.reached]
    if result.node:
        seen.append(result.node)
    order = list(LINEAR_FLOW)
    order += [n for n in dict.fromkeys(seen) if n not in order]
    return order


def _furthest(attempt: Attempt) -> dict[str, int]:
    stage: dict[str, int] = {}
    for node, point in attempt.reached:
        if point in STAGES:
            stage[node] = max(stage.get(node, -1), STAGES.index(point))
    return stage


def _count(result: ScenarioResult, node: str) -> int | None:
    what = EFFECT_WORDS.get(node, ("",))[0]
    return getattr(result, what, None) if what else None


def _heading(result: ScenarioResult) -> str:
    if result.node:
        crash = f"killed at {result.node}/{result.point}"
    else:
        armed = next((a.armed for a in result.attempts if a.armed), "")
        crash = armed.replace("timer", "killed by a timer after") if armed else "no kill"
    return f"{result.graph} graph, {crash}, then resumed"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def timeline_figure(result: ScenarioResult) -> Figure:
    """One row per attempt, one column per node, then the ledger; see the module docstring."""
    nodes = _nodes(result)
    attempts = result.attempts
    rows = max(len(attempts), 1)
    figure = new_figure(7.0, 1.4 + 0.4 * rows)
    ax = figure.add_subplot()
    effect_done: set[str] = set()  # nodes whose effect happened in an earlier run
    saved: set[str] = set()  # nodes checkpointed in an earlier run

    for row, attempt in enumerate(attempts):
        stage = _furthest(attempt)
        if not stage and attempt.outcome == "completed":
            ax.text(len(nodes) / 2 - 0.5, row, "nothing left to run: the last checkpoint was "
                    "the end of the graph", ha="center", va="center", fontsize=8.5, color=GREY,
                    style="italic")
            continue
        for col, node in enumerate(nodes):
            reached = stage.get(node, -1)
            if reached < 0:
                if node in saved:
                    _cell(ax, col, row, "white", GREY, "skipped", GREY, dashed=True)
                continue
            again = reached >= 1 and node in effect_done
            count = _count(result, node)
            text, colour, edge, weight = STAGE_WORDS[reached], INK, "#555555", "normal"
            if node in EFFECT_WORDS and reached >= 1:
                text = EFFECT_WORDS[node][1]
            if again and count is not None and count > 1:
                text, colour, edge, weight = f"{text}\nAGAIN", RED, RED, "bold"
            elif again and count is not None:
                text, colour = f"same key:\nno new {node}", "#1b5e20"
            _cell(ax, col, row, FILL[reached], edge, text, colour, weight=weight,
                  thick=edge == RED)
        if attempt.outcome == "killed":
            _kill_mark(ax, nodes, attempt, row)
        effect_done |= {n for n, s in stage.items() if s >= 1}
        saved |= {n for n, s in stage.items() if s >= 2}
    _ledger_box(ax, result, len(nodes), rows)

    ax.set_xlim(-0.52, len(nodes) + 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xticks(range(len(nodes) + 1), [*nodes, "ledger"], fontsize=9.5, fontweight="bold")
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_yticks(range(len(attempts)),
                  [f"run {a.number}\n{OUTCOME_WORDS.get(a.outcome, a.outcome)}"
                   for a in attempts], fontsize=8.5)
    for spine in ax.spines.values():
        spine.set_visible(False)
    for col in range(len(nodes)):
        ax.axvline(col + 0.5, color="#bbbbbb" if col == len(nodes) - 1 else "#eeeeee",
                   lw=0.8, zorder=0)
    ax.set_title(_heading(result), loc="left", fontsize=9.5)
    handles = [Patch(fc=FILL[i], ec="#555555", label=label) for i, label in
               enumerate(("started", "provider answered, guard not told",
                          "effect done, not saved", "write record saved", "checkpointed"))]
    handles += [Patch(fc="white", ec=GREY, ls="--", label="skipped (saved earlier)"),
                Line2D([], [], marker="X", ls="", color=RED, ms=8, label="SIGKILL")]
    figure.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=7.5,
                  frameon=False, handlelength=1.4, columnspacing=1.2)
    return figure


def _ledger_box(ax, result: ScenarioResult, col: int, rows: int) -> None:
    """The ledger's counts and the verdict, in one box spanning every row."""
    trouble = not result.verdict.startswith("ok")
    ax.add_patch(FancyBboxPatch((col - HALF, -0.3), 2 * HALF, rows - 0.4,
                                boxstyle="round,pad=0,rounding_size=0.08",
                                fc="#fdecea" if trouble else "#e8f5e9",
                                ec=RED if trouble else "#2e7d32", lw=1.2, zorder=2))
    lines = [(_plural(result.charges, "charge"), result.charges > 1),
             (_plural(result.emails, "email"), result.emails > 1)]
    verdict = result.verdict if len(result.verdict) <= 16 else result.verdict[:15] + "\u2026"
    middle = (rows - 1) / 2
    step = min(0.22, (rows - 0.5) / 4)
    for i, (text, bad) in enumerate(lines):
        ax.text(col, middle + (i - 1.5) * step, text, ha="center", va="center", fontsize=8,
                color=RED if bad else INK, fontweight="bold" if bad else "normal", zorder=3)
    ax.text(col, middle + 1.1 * step, verdict, ha="center", va="center", fontsize=8,
            fontweight="bold", color=RED if trouble else "#1b5e20", zorder=3)


def _cell(ax, col: int, row: int, fill: str, edge: str, text: str, colour: str, *,
          dashed: bool = False, weight: str = "normal", thick: bool = False) -> None:
    ax.add_patch(FancyBboxPatch((col - HALF, row - 0.3), 2 * HALF, 0.6,
                                boxstyle="round,pad=0,rounding_size=0.08", fc=fill, ec=edge,
                                lw=2.4 if thick else 0.9, ls="--" if dashed else "-",
                                zorder=2))
    ax.text(col, row, text, ha="center", va="center", fontsize=8, color=colour,
            fontweight=weight, zorder=3)


def _kill_mark(ax, nodes: list[str], attempt: Attempt, row: int) -> None:
    if attempt.reached:
        node, point = attempt.reached[-1]
        col = nodes.index(node)
        x = col + 0.5 if point == "after_checkpoint" else col + HALF
    else:
        x = -HALF  # killed before the first node started
    ax.plot([x], [row], marker="X", ms=15, color=RED, mec="white", mew=1.2, zorder=5,
            clip_on=False)
