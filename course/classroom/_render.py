"""Figures for the classroom: built without pyplot, shown as PNG anywhere.

Promises:
- :func:`new_figure` makes a :class:`CourseFigure`, a matplotlib ``Figure``
  that pyplot does not track: the inline backend never shows it a second time
  at the end of a cell, and nothing stays open after a widget redraws.
- A :class:`CourseFigure` that a notebook cell returns shows as a PNG
  (``_repr_png_``), whatever backend is active and with no front end at all.
- :func:`png_bytes` renders any figure to PNG with matplotlib's own rasteriser
  (headless: no display needed).
- A :class:`CourseFigure` draws on that rasteriser's canvas (Agg) from the start, so
  ``figure.canvas.get_renderer()`` measures text exactly as the PNG will show it: the
  pictures fit their labels by measuring them.
"""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 100


class CourseFigure(Figure):
    """A Figure that knows how to show itself as a PNG in Jupyter."""

    def _repr_png_(self) -> bytes:
        return png_bytes(self)


def new_figure(width: float, height: float) -> CourseFigure:
    figure = CourseFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)  # becomes figure.canvas
    return figure


def png_bytes(figure: Figure, dpi: int = DPI) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    return buffer.getvalue()
