"""Why retries compound: the chance that a run of n steps succeeds is p**n.

Promises:
- :func:`success_rate` is the formula, ``p ** n``, with a clear ``ValueError``
  for a p outside [0, 1] or an n that is not a whole number >= 0.
- :func:`simulate_success` measures the same thing the slow way: it plays
  ``runs`` runs of n independent steps, each step succeeding with chance p
  (``random.Random(seed)``: the same seed gives the same number), and returns
  the fraction of runs in which every step succeeded.
- :func:`simulate_curve` measures every run length 1..n from one simulation
  (a run that survived k steps counts as a success for every length <= k), so
  ``simulate_curve(p, n)[-1] == (n, simulate_success(p, n))``.
- :func:`compounding_figure` draws the formula as a curve, the simulation as
  points, and marks 5 and 20 steps (at p = 0.95: about 77 % and 36 %). Each mark's
  call-out goes where matplotlib's renderer measures it inside the axes (so it never
  meets a tick label), clear of the legend and of the other call-out, and where it
  can, clear of the curve: for every p and n the sliders allow.
- :class:`CompoundingExplorer` puts two sliders on that figure; moving a slider
  or calling :meth:`CompoundingExplorer.set` redraws it. The numbers behind the
  picture stay readable as plain Python: ``.curve`` and ``.simulated``.
"""

from __future__ import annotations

import math
import numbers
import random
import weakref
from collections.abc import Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter
from matplotlib.transforms import Bbox

from course.classroom._render import new_figure, png_bytes

MARKED_STEPS = (5, 20)  # the two run lengths the lesson quotes
Points = list[tuple[int, float]]


def _check_p(p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or math.isnan(p) \
            or not 0 <= p <= 1:
        hint = f" (did you mean {p / 100:g}?)" if isinstance(p, numbers.Real) \
            and not isinstance(p, bool) and 1 < p <= 100 else ""
        raise ValueError("p is the chance that one step succeeds: a number from 0 to 1 "
                         f"(0.95 means 95 %); got {p!r}{hint}")
    return float(p)


def _check_count(value: object, name: str, what: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} is {what}: a whole number {minimum} or more; got {value!r}")
    return int(value)


def success_rate(p: float, n: int) -> float:
    """The chance that all ``n`` independent steps succeed when each succeeds with ``p``."""
    p = _check_p(p)
    n = _check_count(n, "n", "the number of steps in a run")
    return p ** n


def _steps_survived(p: float, n: int, runs: int, seed: object) -> list[int]:
    """``histogram[s]``: how many runs succeeded at exactly s steps before failing (s = n: all)."""
    draw = random.Random(seed).random
    histogram = [0] * (n + 1)
    for _ in range(runs):
        steps = 0
        while steps < n and draw() < p:  # the first failed step ends the run
            steps += 1
        histogram[steps] += 1
    return histogram


def _check_simulation(p: float, n: int, runs: int) -> tuple[float, int, int]:
    return (_check_p(p), _check_count(n, "n", "the number of steps in a run"),
            _check_count(runs, "runs", "how many runs to simulate", minimum=1))


def simulate_success(p: float, n: int, runs: int = 10_000, seed: object = 0) -> float:
    """Measured share of ``runs`` simulated runs of ``n`` steps in which every step succeeded."""
    p, n, runs = _check_simulation(p, n, runs)
    return _steps_survived(p, n, runs, seed)[n] / runs


def simulate_curve(p: float, n: int, runs: int = 10_000, seed: object = 0) -> Points:
    """``[(k, measured share of runs that survived k steps)]`` for k = 1..n, one simulation."""
    p, n, runs = _check_simulation(p, n, runs)
    histogram = _steps_survived(p, n, runs, seed)
    points: Points = []
    survivors = runs
    for k in range(1, n + 1):
        survivors -= histogram[k - 1]
        points.append((k, survivors / runs))
    return points


def compounding_figure(p: float, n: int, simulated: bool | Sequence[tuple[int, float]] = True,
                       *, runs: int | None = None, seed: object = 0) -> Figure:
    """The curve p**k for k = 1..n, simulated points on it, and the 5- and 20-step marks.

    ``simulated``: True simulates ``runs`` runs (10,000 by default), False draws
    the curve alone, a list of ``(k, measured)`` draws those points (say how many
    runs they come from with ``runs`` to have it in the legend).
    """
    p = _check_p(p)
    n = _check_count(n, "n", "the number of steps in a run", minimum=1)
    if simulated is True:
        runs = 10_000 if runs is None else runs
        points = simulate_curve(p, n, runs, seed)
    elif simulated is False:
        points = []
    else:
        points = [(int(k), float(v)) for k, v in simulated]

    figure = new_figure(6.4, 3.0)
    ax = figure.add_subplot()
    fine = [1 + i * (n - 1) / 400 for i in range(401)] if n > 1 else [1.0]
    # The formula's line is drawn over the dots (zorder), so that many dots (n = 100) do
    # not hide it; at n = 1 it is a single point, drawn as a bar-like marker.
    ax.plot(fine, [p ** x for x in fine], color="#1f5fa8", lw=2, zorder=3.5,
            marker="_" if n == 1 else None, ms=30, mew=2,
            label=f"formula: {p:g}$^{{k}}$")
    if points:
        ax.plot([k for k, _ in points], [v for _, v in points], "o",
                ms=4.5 if n <= 30 else 3.5, mfc="#f28e2b", mec="white", mew=0.6, zorder=3,
                label="simulated" + (f": {runs:,} runs" if runs else ""))
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    if n <= 10:  # every step a tick (a locator puts ticks at 0.5 and 1.5 for n = 1)
        ax.set_xticks(range(1, n + 1))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("steps in the run (k)")
    ax.set_ylabel("runs that succeed")
    ax.set_title(f"Each step succeeds {p * 100:.3g}% of the time; "
                 "all k succeed with probability p$^k$", fontsize=10.5, loc="left")
    ax.grid(alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    legend = ax.legend(loc="best", fontsize=8.5, framealpha=0.9, edgecolor="#dddddd")
    marked = [k for k in MARKED_STEPS if k <= n]
    for k in marked:
        ax.plot([k, k], [0, p ** k], color="#555555", lw=0.8, ls=":")
        ax.plot([k], [p ** k], "o", ms=9, mfc="none", mec="#111111", mew=1.6, zorder=4)
    figure.draw_without_rendering()  # settles the layout and where "best" puts the legend
    renderer = figure.canvas.get_renderer()
    where = legend.get_window_extent(renderer).transformed(ax.transAxes.inverted())
    legend.set_loc((where.x0, where.y0))  # stays there: the call-outs are placed around it
    _place_callouts(ax, renderer, p, marked, fine, legend.get_window_extent(renderer))
    return figure


# Where a call-out may go, tried in this order: (x, y) offset from its point in points.
# Near first, above-right first (the curve falls, so above-right of a point is clear of
# it while the curve is steep), then further out.
OFFSETS = [(dx, dy) for reach in (1, 2, 3, 4) for dx, dy in
           ((10, 10 * reach), (-10, 10 * reach), (10, -12 * reach), (-10, -12 * reach),
            (16 * reach, 0), (-16 * reach, 0))]
MARGIN = 3.0  # pixels kept between a call-out and the axes' edge, the legend, another one


def _place_callouts(ax, renderer, p: float, marked: list[int], fine: list[float],
                    legend: Bbox) -> None:
    """Mark each of ``marked`` with "k steps: x%" where its box stays inside the axes (so
    it never meets a tick label) and clear of the legend and of the other call-out,
    preferring a place clear of the curve too. Measured with the renderer."""
    inside = ax.get_window_extent(renderer).padded(-MARGIN)
    curve = ax.transData.transform([(x, p ** x) for x in fine])
    taken: list[Bbox] = [legend.padded(MARGIN)]
    for k in marked:
        value = p ** k
        best, best_cost = None, None
        for dx, dy in OFFSETS:
            note = ax.annotate(
                f"{k} steps: {value:.0%}", (k, value), xytext=(dx, dy),
                textcoords="offset points", ha="left" if dx > 0 else "right" if dx < 0
                else "center", va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                fontsize=9.5, fontweight="bold", annotation_clip=False, in_layout=False,
                bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#bbbbbb"})
            note.update_positions(renderer)  # where the offset puts it (no draw needed)
            note.update_bbox_position_size(renderer)
            box = note.get_bbox_patch().get_window_extent(renderer)
            hard = (not _within(box, inside)) + sum(box.overlaps(t) for t in taken)
            soft = int(((curve[:, 0] >= box.x0) & (curve[:, 0] <= box.x1)
                        & (curve[:, 1] >= box.y0) & (curve[:, 1] <= box.y1)).any())
            cost = (hard, soft, abs(dx) + abs(dy))
            if best_cost is None or cost < best_cost:
                if best is not None:
                    best[0].remove()
                best, best_cost = (note, box), cost
            else:
                note.remove()
            if cost[:2] == (0, 0):
                break
        taken.append(best[1].padded(MARGIN))


def _within(box: Bbox, outer: Bbox) -> bool:
    return (box.x0 >= outer.x0 and box.x1 <= outer.x1 and box.y0 >= outer.y0
            and box.y1 <= outer.y1)


class CompoundingExplorer:
    """Sliders for p and n over the compounding figure (display it in a notebook cell)."""

    def __init__(self, p: float = 0.95, n: int = 20, *, runs: int = 10_000,
                 seed: object = 0) -> None:
        p = _check_p(p)
        n = _check_count(n, "n", "the number of steps in a run", minimum=1)
        self.runs = _check_count(runs, "runs", "how many runs to simulate", minimum=1)
        self.seed = seed
        self.curve: Points = []
        self.simulated: Points = []
        wide = {"description_width": "initial"}
        self.p_slider = widgets.FloatSlider(
            value=p, min=min(0.5, p), max=1.0, step=0.005, readout_format=".3f",
            description="p (one step succeeds)", continuous_update=False, style=wide,
            layout=widgets.Layout(width="420px"))
        self.n_slider = widgets.IntSlider(
            value=n, min=1, max=max(100, n), step=1, description="max steps n",
            continuous_update=False, style=wide, layout=widgets.Layout(width="300px"))
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.plot = widgets.Box([self.image])
        self.p_slider.add_class("compounding-p")
        self.n_slider.add_class("compounding-n")
        self.plot.add_class("compounding-plot")
        self.summary.add_class("compounding-summary")
        self.widget = widgets.VBox([widgets.HBox([self.p_slider, self.n_slider]),
                                    self.summary, self.plot])
        self._quiet = False
        me = weakref.ref(self)  # the sliders must not keep the explorer alive

        def on_slide(_change: object) -> None:
            explorer = me()
            if explorer is not None and not explorer._quiet:
                explorer._redraw()

        self.p_slider.observe(on_slide, names="value")
        self.n_slider.observe(on_slide, names="value")
        self._redraw()

    @property
    def p(self) -> float:
        return float(self.p_slider.value)

    @property
    def n(self) -> int:
        return int(self.n_slider.value)

    def set(self, p: float | None = None, n: int | None = None) -> None:
        """Move the sliders from Python (same as dragging them) and redraw once."""
        p = self.p if p is None else _check_p(p)
        n = self.n if n is None else _check_count(n, "n", "the number of steps in a run", 1)
        self._quiet = True
        try:
            self.p_slider.min = min(self.p_slider.min, p)
            self.n_slider.max = max(self.n_slider.max, n)
            self.p_slider.value = p
            self.n_slider.value = n
        finally:
            self._quiet = False
        self._redraw()

    def figure(self) -> Figure:
        """The current picture as a matplotlib Figure (for saving or showing elsewhere)."""
        return compounding_figure(self.p, self.n, self.simulated, runs=self.runs)

    def _redraw(self) -> None:
        p, n = self.p, self.n
        self.curve = [(k, p ** k) for k in range(1, n + 1)]
        self.simulated = simulate_curve(p, n, self.runs, self.seed)
        self.image.value = png_bytes(self.figure())
        measured = self.simulated[-1][1]
        self.summary.value = (
            f"A run of <b>{n}</b> step{'s' * (n != 1)} at p = {p:.3f}: formula "
            f"p<sup>{n}</sup> = "
            f"<b>{p ** n:.1%}</b>, measured in {self.runs:,} simulated runs: "
            f"<b>{measured:.1%}</b>")

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"CompoundingExplorer(p={self.p:g}, n={self.n})"
