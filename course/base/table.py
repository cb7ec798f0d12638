"""A tiny table that prints as text and renders as HTML in Jupyter.

Used wherever the course shows rows (charges, ledgers, crash matrices) so
students see a table, and tests can read plain ``rows``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any


class Table:
    def __init__(self, rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                 title: str = "") -> None:
        self.rows = [dict(r) for r in rows]
        self.columns = list(columns) if columns else _columns_of(self.rows)
        self.title = title

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.rows[index]

    def column(self, name: str) -> list[Any]:
        return [r.get(name) for r in self.rows]

    def __str__(self) -> str:
        cells = [[str(c) for c in self.columns]] + [
            [_fmt(r.get(c)) for c in self.columns] for r in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
                 for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if not self.rows:
            lines.append("(no rows)")
        return "\n".join(([self.title] if self.title else []) + lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.columns)
        empty = f"<tr><td colspan={len(self.columns)}>(no rows)</td></tr>"
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c)))}</td>" for c in self.columns)
            + "</tr>" for r in self.rows) or empty
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _columns_of(rows: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        seen.update(dict.fromkeys(r))
    return list(seen)


def _fmt(value: Any) -> str:
    return "" if value is None else str(value)
