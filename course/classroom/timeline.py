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

The ledger counts (charges, emails) and the verdict are in the last column. Every
word is measured with matplotlib's renderer and fitted inside its box (wrapped at
spaces, then a smaller font, then cut with "…"), clear of the SIGKILL mark, so no
label touches its box or another label whatever the scenario. The figure is a plain
matplotlib Figure, so ``figure.savefig("x.png")`` works headless.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.text import Text
from matplotlib.transforms import offset_copy

from course.classroom._render import new_figure
from course.cloudwave.graph import LINEAR_FLOW
from course.crash import Attempt, ScenarioResult

STAGES = ("before_effect", "before_record", "after_effect", "after_writes", "after_checkpoint")
# started / provider answered, guard not told / ran, not saved / writes saved / checkpointed:
# five hues a reader tells apart at a glance (grey, yellow, orange, cyan, green; every two
# at least 29 apart in CIELAB, where the old two greens were 12), all light enough for
# dark text.
FILL = ("#e0e0e0", "#ffe082", "#ff8a65", "#80deea", "#66bb6a")
STAGE_WORDS = ("started", "paid, unrecorded", "ran, not saved", "writes saved", "done")
EFFECT_WORDS = {"charge": ("charges", "charged"), "email": ("emails", "emailed")}
OUTCOME_WORDS = {"killed": "killed", "completed": "completed",
                 "needs_reconcile": "stopped: reconcile", "retry": "key busy: retry",
                 "error": "error"}
RED, GREY, INK = "#c62828", "#9e9e9e", "#222222"
HALF = 0.42  # half the width of a cell
TALL = 0.3  # half the height of a cell
KILL_MS = 15  # the SIGKILL mark's size (points)
SIZES = (8.0, 7.5, 7.0, 6.5, 6.0)  # font sizes a label may take, largest first
PAD = 5.0  # pixels kept clear inside a box, on every side
GAP = 3.0  # pixels between two labels stacked in one box


def _nodes(result: ScenarioResult) -> list[str]:
    seen = [n for a in result.attempts for n, p in a.reached if p in STAGES]
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
    if result.node and result.killed_as_armed:
        crash = f"killed at {result.node}/{result.point}, then resumed"
    elif result.node:
        crash = f"armed at {result.node}/{result.point}, never reached: no kill"
    else:
        armed = next((a.armed for a in result.attempts if a.armed), "")
        crash = (armed.replace("timer", "killed by a timer after") if armed else "no kill") \
            + ", then resumed"
    return f"{result.graph} graph, {crash}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def timeline_figure(result: ScenarioResult) -> Figure:
    """One row per attempt, one column per node, then the ledger; see the module docstring."""
    nodes = _nodes(result)
    attempts = result.attempts
    rows = max(len(attempts), 1)
    figure = new_figure(7.0, 1.5 + 0.55 * max(rows, 2))
    ax = figure.add_subplot()
    _frame(figure, ax, result, nodes, rows)
    figure.draw_without_rendering()  # the layout is settled now: boxes have their pixel sizes
    labels: list[tuple[float, float, list[tuple[str, dict]], float]] = []
    effect_done: set[str] = set()  # nodes whose effect happened in an earlier run
    saved: set[str] = set()  # nodes checkpointed in an earlier run

    for row, attempt in enumerate(attempts):
        stage = _furthest(attempt)
        if not stage and attempt.outcome == "completed":
            ax.text(len(nodes) / 2 - 0.5, row, "nothing left to run: the last checkpoint was "
                    "the end of the graph", ha="center", va="center", fontsize=8.5, color=GREY,
                    style="italic", in_layout=False)
            continue
        killed_in = _killed_in(nodes, attempt) if attempt.outcome == "killed" else None
        for col, node in enumerate(nodes):
            reached = stage.get(node, -1)
            clear = KILL_MS * 0.75 if col == killed_in else 0.0  # pixels the X takes (right)
            if reached < 0:
                if node in saved:
                    _box(ax, col, row, "white", GREY, dashed=True)
                    labels.append((col, row, [("skipped", {"color": GREY})], clear))
                continue
            again = reached >= 1 and node in effect_done
            count = _count(result, node)
            text, colour, edge, weight = STAGE_WORDS[reached], INK, "#555555", "normal"
            if node in EFFECT_WORDS and reached >= 1:
                text = EFFECT_WORDS[node][1]
            if again and count is not None and count > 1:
                text, colour, edge, weight = f"{text} AGAIN", RED, RED, "bold"
            elif again and count is not None:
                text, colour = f"same key: no new {node}", "#1b5e20"
            _box(ax, col, row, FILL[reached], edge, thick=edge == RED)
            labels.append((col, row, [(text, {"color": colour, "fontweight": weight})], clear))
        if attempt.outcome == "killed":
            _kill_mark(ax, nodes, attempt, row)
        effect_done |= {n for n, s in stage.items() if s >= 1}
        saved |= {n for n, s in stage.items() if s >= 2}
    renderer = figure.canvas.get_renderer()
    for col, row, parts, clear in labels:
        _fit(ax, renderer, col, row, row - TALL, row + TALL, parts, clear)
    _ledger(ax, renderer, result, len(nodes), rows)
    return figure


def _frame(figure: Figure, ax, result: ScenarioResult, nodes: list[str], rows: int) -> None:
    """Everything but the boxes: axes, ticks, grid lines, heading and legend."""
    attempts = result.attempts
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


def _ledger(ax, renderer, result: ScenarioResult, col: int, rows: int) -> None:
    """The ledger's counts and the verdict, in one box spanning every row."""
    trouble = not result.verdict.startswith("ok")
    top, bottom = -TALL, rows - 1 + TALL
    ax.add_patch(FancyBboxPatch((col - HALF, top), 2 * HALF, bottom - top,
                                boxstyle="round,pad=0,rounding_size=0.08",
                                fc="#fdecea" if trouble else "#e8f5e9",
                                ec=RED if trouble else "#2e7d32", lw=1.2, zorder=2))
    parts = [(_plural(count, word), {"color": RED, "fontweight": "bold"} if count > 1
              else {"color": INK}) for count, word in ((result.charges, "charge"),
                                                       (result.emails, "email"))]
    verdict = "NOT KILLED" if result.verdict.startswith("NOT KILLED") else result.verdict
    parts.append((verdict, {"color": RED if trouble else "#1b5e20",  # (the heading says where)
                            "fontweight": "bold"}))
    _fit(ax, renderer, col, None, top, bottom, parts, 0.0)


def _box(ax, col: int, row: int, fill: str, edge: str, *, dashed: bool = False,
         thick: bool = False) -> None:
    ax.add_patch(FancyBboxPatch((col - HALF, row - TALL), 2 * HALF, 2 * TALL,
                                boxstyle="round,pad=0,rounding_size=0.08", fc=fill, ec=edge,
                                lw=2.4 if thick else 0.9, ls="--" if dashed else "-",
                                zorder=2))


def _fit(ax, renderer, col: float, row: float | None, top: float, bottom: float,
         parts: list[tuple[str, dict]], clear: float) -> None:
    """Write ``parts`` (text, style) one under another, centred in the box from ``top`` to
    ``bottom`` (data rows) around column ``col``, each wrapped at spaces to the box's width
    less PAD on each side and ``clear`` pixels more on the right (the SIGKILL mark); the
    largest font of SIZES at which all of it fits; at the smallest, the last part is cut
    short with "…" until it fits."""
    (left, y0), (right, y1) = ax.transData.transform([(col - HALF, top), (col + HALF, bottom)])
    width = abs(right - left) - 2 * PAD - clear
    height = abs(y1 - y0) - 2 * PAD
    probe = Text(0, 0, "", figure=ax.figure)
    for size in SIZES:
        lines = [_wrap(probe, renderer, text, style, size, width) for text, style in parts]
        sizes = [_extent(probe, renderer, line, style, size) for line, (_, style)
                 in zip(lines, parts, strict=True)]
        fits = all(w <= width for w, _ in sizes) and \
            sum(h for _, h in sizes) + GAP * (len(sizes) - 1) <= height
        if fits:
            break
    else:  # even the smallest font is too big: cut the last part short
        words = parts[-1][0].split()
        while not fits and words:
            words.pop()
            lines[-1] = _wrap(probe, renderer, " ".join(words) + "…", parts[-1][1], size,
                              width)
            sizes[-1] = _extent(probe, renderer, lines[-1], parts[-1][1], size)
            fits = all(w <= width for w, _ in sizes) and \
                sum(h for _, h in sizes) + GAP * (len(sizes) - 1) <= height
    points = 72.0 / ax.figure.dpi  # pixels to points
    middle = (top + bottom) / 2 if row is None else row
    y = (sum(h for _, h in sizes) + GAP * (len(sizes) - 1)) / 2  # pixels above the middle
    for line, (_, style), (_, h) in zip(lines, parts, sizes, strict=True):
        at = offset_copy(ax.transData, ax.figure, x=-clear / 2 * points,
                         y=(y - h / 2) * points, units="points")
        ax.text(col, middle, line, transform=at, ha="center", va="center", fontsize=size,
                multialignment="center", zorder=3, in_layout=False, **style)
        y -= h + GAP


def _extent(probe: Text, renderer, text: str, style: dict, size: float) -> tuple[float, float]:
    probe.set_text(text)
    probe.set_fontsize(size)
    probe.set_fontweight(style.get("fontweight", "normal"))
    box = probe.get_window_extent(renderer)
    return box.width, box.height


def _wrap(probe: Text, renderer, text: str, style: dict, size: float, width: float) -> str:
    """``text`` with line breaks at spaces so each line fits ``width`` pixels if it can."""
    lines: list[str] = []
    for word in text.split():
        if lines and _extent(probe, renderer, f"{lines[-1]} {word}", style, size)[0] <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def _killed_in(nodes: list[str], attempt: Attempt) -> int | None:
    """The column whose box the SIGKILL mark sits on the right edge of (None: between)."""
    reached = [(n, p) for n, p in attempt.reached if p in STAGES and n in nodes]
    if not reached:
        return None
    node, point = reached[-1]
    return None if point == "after_checkpoint" else nodes.index(node)


def _kill_mark(ax, nodes: list[str], attempt: Attempt, row: int) -> None:
    reached = [(n, p) for n, p in attempt.reached if p in STAGES and n in nodes]
    if reached:
        node, point = reached[-1]
        col = nodes.index(node)
        x = col + 0.5 if point == "after_checkpoint" else col + HALF
    else:
        x = -HALF  # killed before the first node started
    ax.plot([x], [row], marker="X", ms=KILL_MS, color=RED, mec="white", mew=1.2, zorder=5,
            clip_on=False)
