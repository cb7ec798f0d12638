"""Drive JupyterLab 4 in a Playwright page the way a student does, and read what they see.

Promises (every reading comes from the page's DOM, never from the kernel or the file):
- ``LabPage.open(path)`` deletes leftover kernel sessions, opens the notebook,
  and returns once its tab is current and the status bar reads "<kernel> | Idle".
- ``run_all()`` clicks Run > Run All Cells; ``wait_run_finished()`` returns once no
  cell is queued or running, the kernel is idle, and that has held for a moment;
  with ``every_cell=True`` it also waits until every non-empty code cell has an
  execution count (Run All stops at the first error, so a failing notebook times out).
- ``code_cells()`` reads each code cell's prompt, source and outputs (MIME type and
  text) from the page; ``error_outputs()`` keeps the outputs that show an exception.
- ``validate()`` presses nbgrader's Validate toolbar button and returns the result
  dialog's CSS classes and text.
- ``shot(name)`` saves a screenshot of the window under the test's artifact folder
  and notes how long the step before it took (``timings``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from labserver import LabServer

if TYPE_CHECKING:  # playwright is imported by the fixtures, which skip or fail clearly
    from playwright.sync_api import Locator, Page

IDLE = re.compile(r"^\s*\S.*\|\s*Idle\s*$")
# An exception as IPython shows it: a traceback, or a line like "NameError: ..."
ERROR_TEXT = re.compile(
    r"Traceback \(most recent call last\)|^\s*\w*(?:Error|Exception|Interrupt)\b", re.M
)

_READ_CELLS = """
panel => Array.from(panel.querySelectorAll('.jp-Cell.jp-CodeCell')).map(cell => ({
  prompt: (cell.querySelector('.jp-InputPrompt')?.innerText ?? '').trim(),
  source: cell.querySelector('.jp-InputArea-editor .cm-content')?.innerText ?? '',
  outputs: Array.from(cell.querySelectorAll(
      '.jp-OutputArea-child > .jp-OutputArea-output')).map(out => ({
    mime: out.getAttribute('data-mime-type') ?? 'widget',
    text: out.innerText,
  })),
}))
"""


_READ_TABLES = """
el => Object.fromEntries(Array.from(el.querySelectorAll('table')).map((table, i) => {
  const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
  const rows = Array.from(table.querySelectorAll('tbody tr')).map(tr =>
      Object.fromEntries(Array.from(tr.querySelectorAll('td')).map(
          (td, j) => [heads[j] ?? String(j), td.innerText.trim()])));
  return [table.querySelector('caption')?.innerText.trim() || `table ${i}`, rows];
}))
"""


@dataclass
class Output:
    mime: str
    text: str

    @property
    def is_error(self) -> bool:
        return self.mime == "application/vnd.jupyter.stderr" and bool(ERROR_TEXT.search(self.text))


@dataclass
class CodeCell:
    index: int
    prompt: str
    source: str
    outputs: list[Output] = field(default_factory=list)

    @property
    def executed(self) -> bool:
        return re.fullmatch(r"\[\d+\]:", self.prompt) is not None

    @property
    def running(self) -> bool:
        return self.prompt == "[*]:"

    @property
    def empty(self) -> bool:
        return not self.source.strip()


def write_timings(folder: Path, test: str, timings: list[tuple[str, float]]) -> None:
    """Append each step's seconds to ``folder/timings.txt``."""
    with (folder / "timings.txt").open("a") as out:
        for step, seconds in timings:
            out.write(f"{seconds:7.1f} s  {test}/{step}\n")


class LabPage:
    """One Playwright page on one LabServer; screenshots go to ``artifacts``."""

    def __init__(self, page: Page, server: LabServer, artifacts: Path) -> None:
        self.page = page
        self.server = server
        self.begin(artifacts)

    def begin(self, artifacts: Path) -> None:
        """Start a new test: screenshots go to ``artifacts``, numbering and timings restart."""
        self.artifacts = artifacts
        self._shots = 0
        self._last = time.monotonic()
        self.timings: list[tuple[str, float]] = []  # (screenshot, seconds since the previous)

    # -- screenshots -------------------------------------------------------------------
    def shot(self, name: str, show: Locator | None = None) -> Path:
        """Screenshot of the window, scrolled to ``show`` first when given."""
        if show is not None:
            show.scroll_into_view_if_needed()
        self._shots += 1
        self.artifacts.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^\w.-]+", "-", name)
        path = self.artifacts / f"{self._shots:02d}-{slug}.png"
        self.page.screenshot(path=str(path))
        now = time.monotonic()
        self.timings.append((path.stem, now - self._last))
        self._last = now
        return path

    # -- opening and kernel state -----------------------------------------------------
    @property
    def panel(self) -> Locator:
        """The notebook panel in the main area that is showing now."""
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first

    def goto(self, url: str) -> None:
        """Load ``url``. When Chromium's renderer crashes on the way (a crash of the
        browser's tab, not of the lab: seen once in a full run under load), the page is
        replaced by a new one in the same context and the load is tried once more."""
        try:
            self.page.goto(url)
        except Exception as error:  # playwright's TargetClosedError: "Page crashed"
            if "crashed" not in str(error):
                raise
            print(f"Chromium's page crashed loading {url}; trying once more in a new page")
            self.page = self.page.context.new_page()
            self.page.goto(url)

    def open(self, path: str, timeout_s: float = 90) -> None:
        self.server.delete_sessions()
        self.goto(self.server.lab_url(path))
        self.wait_notebook(Path(path).name, timeout_s)

    def wait_notebook(self, name: str, timeout_s: float = 90) -> None:
        """Wait until the current main-area tab is ``name`` and its kernel is idle."""
        tab = self.page.locator(".jp-mod-current.lm-TabBar-tab .lm-TabBar-tabLabel")
        tab.filter(has_text=re.compile(rf"^{re.escape(name)}$")).wait_for(
            timeout=timeout_s * 1000)
        self.panel.locator(".jp-Notebook").wait_for(timeout=timeout_s * 1000)
        self.wait_idle(timeout_s)

    def kernel_status(self) -> str:
        """The status bar's kernel item, e.g. "Python 3 (ipykernel) | Idle"."""
        items = self.page.locator(
            "#jp-main-statusbar .jp-StatusBar-TextItem[title^='Change kernel']"
        ).all_inner_texts()
        return items[0].strip() if items else ""

    def wait_idle(self, timeout_s: float = 90, settle_s: float = 0.0) -> None:
        """Wait until the status bar has read "... | Idle" for ``settle_s`` seconds."""
        deadline = time.monotonic() + timeout_s
        idle_since: float | None = None
        while time.monotonic() < deadline:
            if IDLE.match(self.kernel_status()):
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= settle_s:
                    return
            else:
                idle_since = None
            self.page.wait_for_timeout(100)
        raise AssertionError(
            f"the kernel never became idle in {timeout_s:.0f} s; the status bar reads "
            f"{self.kernel_status()!r}"
        )

    # -- running ----------------------------------------------------------------------
    def menu(self, top: str, item: str) -> None:
        self.page.get_by_role("menuitem", name=top, exact=True).click()
        self.page.get_by_role("menuitem", name=item, exact=True).click()

    def run_all(self) -> None:
        self.panel.click(position={"x": 5, "y": 5})  # focus this notebook
        self.menu("Run", "Run All Cells")

    def wait_run_finished(self, timeout_s: float = 180, every_cell: bool = False) -> list[CodeCell]:
        """Wait until nothing is queued or running and the kernel has been idle a moment."""
        deadline = time.monotonic() + timeout_s
        calm_since: float | None = None
        cells: list[CodeCell] = []
        while time.monotonic() < deadline:
            cells = [c for c in self.code_cells() if not c.empty]
            settled = (
                cells
                and cells[0].executed
                and not any(c.running for c in cells)
                and (not every_cell or all(c.executed for c in cells))
                and IDLE.match(self.kernel_status())
            )
            if settled:
                calm_since = calm_since or time.monotonic()
                if time.monotonic() - calm_since >= 1.0:
                    return cells
            else:
                calm_since = None
            self.page.wait_for_timeout(250)
        waiting = [f"cell {c.index} {c.prompt}" for c in cells if not c.executed]
        raise AssertionError(
            f"Run All did not finish in {timeout_s:.0f} s (kernel: {self.kernel_status()!r}; "
            f"not executed: {', '.join(waiting[:8]) or 'none'}; errors: "
            f"{[o.text[:300] for o in self.error_outputs(cells)]})"
        )

    # -- reading ----------------------------------------------------------------------
    def code_cells(self) -> list[CodeCell]:
        raw = self.panel.evaluate(_READ_CELLS)
        return [
            CodeCell(i, c["prompt"], c["source"], [Output(**o) for o in c["outputs"]])
            for i, c in enumerate(raw)
        ]

    def error_outputs(self, cells: list[CodeCell] | None = None) -> list[Output]:
        cells = self.code_cells() if cells is None else cells
        return [o for c in cells for o in c.outputs if o.is_error]

    def first_error_cell(self, cells: list[CodeCell] | None = None) -> CodeCell | None:
        cells = self.code_cells() if cells is None else cells
        return next((c for c in cells if any(o.is_error for o in c.outputs)), None)

    @staticmethod
    def tables(where: Locator) -> dict[str, list[dict[str, str]]]:
        """The HTML tables inside ``where`` as rows of {header: cell text}, by caption."""
        return where.evaluate(_READ_TABLES)

    def cell_of(self, selector: str) -> Locator:
        """The code cell whose output holds an element matching ``selector``."""
        return self.panel.locator(".jp-Cell", has=self.page.locator(selector)).first

    # -- nbgrader ---------------------------------------------------------------------
    def validate(self, timeout_s: float = 240) -> tuple[list[str], str]:
        """Press Validate; the result dialog's classes (e.g. "validation-success") and text."""
        self.panel.locator(".validate-button").click()
        message = self.page.locator(".jp-Dialog #validation-message")
        message.wait_for(timeout=timeout_s * 1000)
        classes = (message.get_attribute("class") or "").split()
        return classes, message.inner_text()

    def close_dialog(self) -> None:
        self.page.locator(".jp-Dialog").get_by_role("button", name="Ok").click()
        self.page.locator(".jp-Dialog").wait_for(state="detached")
