"""Run a week's solution notebook headless and keep its outputs (and its widgets' pictures).

:func:`execute` is the same run a grader or ``bench/notebooks.py`` makes: ``nbclient``
starts the course's ``python3`` kernel (the venv's ipykernel, which imports ``course``
from this checkout), runs every cell in a scratch folder and shuts the kernel down. Before
the first cell it runs :mod:`website.widget_pictures` in the kernel (silently, outside
the notebook's history) and after the last it collects every widget's final picture;
each ``application/vnd.jupyter.widget-view+json`` output then gets a ``text/html``
picture beside it (the page keeps the picture, :mod:`website.pages`).

A notebook that fails to run raises :class:`ExecutionFailed` naming the week and the
cell: the site is not built from a half-run notebook.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PICTURES = Path(__file__).with_name("widget_pictures.py")
TIMEOUT_S = 900  # one cell, as bench/notebooks.py


class ExecutionFailed(RuntimeError):
    """A solution notebook raised or timed out."""


def execute(notebook_path: Path, label: str) -> tuple[nbformat.NotebookNode, float]:
    """``(executed notebook, seconds)`` for the notebook at ``notebook_path``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    notebook = nbformat.read(notebook_path, as_version=4)
    scratch = Path(tempfile.mkdtemp(prefix="course-site-"))
    started = time.monotonic()
    try:
        client = NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                                resources={"metadata": {"path": str(scratch)}})
        client.reset_execution_trackers()
        with client.setup_kernel(stderr=subprocess.DEVNULL):
            info = client.wait_for_reply(client.kc.kernel_info())
            if info is not None and "language_info" in info["content"]:
                notebook.metadata["language_info"] = info["content"]["language_info"]
            _silently(client, PICTURES.read_text())
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            dump = scratch / "_widget_pictures.json"
            _silently(client, f"_site_widget_pictures_dump({str(dump)!r})")
            pictures = json.loads(dump.read_text()) if dump.is_file() else {}
        notebook.metadata.pop("widgets", None)  # the live widget state: not used by the site
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
        last = str(error).strip().splitlines()[-1:] or ["?"]
        raise ExecutionFailed(f"{label}: {type(error).__name__}: {last[0][:300]}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    add_pictures(notebook, pictures)
    return notebook, time.monotonic() - started


def _silently(client, source: str) -> None:
    """Run ``source`` in the kernel as a cell that is not the notebook's (nbclient writes
    the cell back at its index: it is appended for the run and taken out again)."""
    cell = nbformat.v4.new_code_cell(source)
    client.nb.cells.append(cell)
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
    finally:
        client.nb.cells.pop()
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    if errors:
        raise ExecutionFailed(f"the site's widget pictures: {errors[0].get('evalue')}")


def add_pictures(notebook: nbformat.NotebookNode, pictures: dict[str, str]) -> None:
    """Give each widget output its picture as ``text/html`` (or say none was made)."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            picture = pictures.get(view.get("model_id", ""))
            output["data"]["text/html"] = (
                '<div class="static-widget">'
                '<div class="static-widget-note">A picture of this widget as the run left it: '
                "in JupyterLab (<code>make lab</code>) it is live.</div>"
                f"{picture if picture else '<em>(the widget left no picture)</em>'}</div>")
