"""The browser helpers can fail: they see an error, a stopped Run All and a broken widget.

The student-experience tests trust ``LabPage`` to say "no errors" and "every cell
ran". This test runs a small notebook with a deliberate error in the same
JupyterLab and checks that the helpers notice, so those passes mean something.
The notebook is written into the server's throwaway copy of the course.
"""

from __future__ import annotations

import time

import nbformat
import pytest

pytestmark = pytest.mark.browser

CELLS = [
    "import sys\nprint('to stdout')\nprint('a warning, not an error', file=sys.stderr)",
    "import ipywidgets as w\n"
    "healthy = w.Button(description='Healthy')\nhealthy.add_class('canary-healthy')\n"
    "healthy_out = w.Output()\nhealthy_out.add_class('canary-healthy-out')\n"
    "def works(_):\n    with healthy_out:\n        print('pressed and answered')\n"
    "healthy.on_click(works)\n"
    "button = w.Button(description='Press')\nbutton.add_class('canary-button')\n"
    "out = w.Output()\nout.add_class('canary-out')\n"
    "def broken(_):\n    with out:\n        raise RuntimeError('this widget is broken')\n"
    "button.on_click(broken)\ndisplay(w.VBox([healthy, healthy_out, button, out]))",
    "raise ValueError('the canary error')",
    "print('never reached')",
]


def test_helpers_see_an_error_a_stopped_run_and_a_dead_widget(lab):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(notebook, lab.server.root / "canary.ipynb")

    lab.open("canary.ipynb")
    lab.run_all()
    cells = lab.wait_run_finished(timeout_s=60)
    lab.shot("run-all-stopped-at-the-error")

    assert [c.executed for c in cells] == [True, True, True, False]
    errors = lab.error_outputs(cells)
    assert len(errors) == 1 and "ValueError" in errors[0].text, errors
    assert lab.first_error_cell(cells).index == 2
    assert any("a warning, not an error" in o.text for o in cells[0].outputs)

    with pytest.raises(AssertionError, match="not executed: cell 3"):
        lab.wait_run_finished(timeout_s=3, every_cell=True)

    # A widget that answers is seen answering; a widget whose handler raises is seen failing
    # (its traceback, in its Output, is an error output): a no-op handler would fail both.
    lab.page.locator(".canary-healthy").click()
    wait_for(lambda: "pressed and answered" in lab.page.locator(
        ".canary-healthy-out").inner_text(), "the healthy widget never answered")
    assert [o.text for o in lab.error_outputs()] == [errors[0].text]  # only the canary error
    lab.page.locator(".canary-button").click()
    wait_for(lambda: any("this widget is broken" in o.text for o in lab.error_outputs()),
             "the helpers did not see the broken widget's error")
    assert "RuntimeError" in lab.page.locator(".canary-out").inner_text()


def wait_for(check, message: str, timeout_s: float = 30) -> None:
    """Poll ``check`` until it is true; fail with ``message`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, message
        time.sleep(0.2)
