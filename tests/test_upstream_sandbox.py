"""The sandbox's hold on library internals: each test fails when the library changes under it.

Every override of a private hook of jupyter_client, nbclient or ipykernel in
``course/sandbox`` lives in a module of its own (issue 46); here, for each, that the
private name still exists where the override targets it, that its signature still has
what the override relies on, and, in one real kernel, that the override is in effect.

- :mod:`course.sandbox.jupyter_client_kernel_launch`: ``_async_pre_start_kernel``,
  ``_async_post_start_kernel``, ``_async_cleanup_resources``; ``LocalProvisioner.pgid``
  and ``.process``;
- :mod:`course.sandbox.nbclient_cell_timeout`: ``NotebookClient._get_timeout`` and the
  ``error_on_timeout`` it is read with;
- :mod:`course.sandbox.ipykernel_stream_write`: ``OutStream.write``, assigned over;
- :mod:`course.sandbox.intact`: the shell attributes it puts back;
- :mod:`course.sandbox.kernel`: ``JPY_PARENT_PID=1`` turning ipykernel's parent poller off.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import inspect
import os
import subprocess
import sys

import nbformat
import pytest
from ipykernel.iostream import OutStream
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbgrader.preprocessors import Execute

from course.sandbox.execute import GradingExecute
from course.sandbox.jupyter_client_kernel_launch import (
    LaunchHooks,
    kernel_pgid,
    kernel_process,
)
from course.sandbox.managers import GradingKernelManager, SandboxedKernelManager
from course.sandbox.nbclient_cell_timeout import CellTimeout

VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


def _private(cls: type) -> set[str]:
    """The underscore methods ``cls`` itself defines (not traitlets' bookkeeping)."""
    return {name for name, value in vars(cls).items() if inspect.isfunction(value)
            and name.startswith("_") and not name.startswith("__")}


def _keywords(function) -> bool:
    return any(p.kind is VAR_KEYWORD for p in inspect.signature(function).parameters.values())


# --------------------------------------------------------------- jupyter_client's launch
LAUNCH_STEPS = {"_async_pre_start_kernel", "_async_post_start_kernel",
                "_async_cleanup_resources"}


def test_the_launch_hooks_override_only_the_three_launch_steps_tested_here():
    assert _private(LaunchHooks) == LAUNCH_STEPS
    for manager in (GradingKernelManager, SandboxedKernelManager):
        assert not _private(manager) & set(dir(AsyncKernelManager)), manager


@pytest.mark.parametrize("name", sorted(LAUNCH_STEPS))
def test_jupyter_client_still_has_each_launch_step_with_its_arguments(name):
    step = getattr(AsyncKernelManager, name)
    assert inspect.iscoroutinefunction(step), name
    if name == "_async_cleanup_resources":
        assert "restart" in inspect.signature(step).parameters
    else:  # the launch's arguments (cwd, env...) pass through as keywords
        assert _keywords(step), inspect.signature(step)


def test_the_managers_names_are_not_jupyter_clients():
    """The managers' own attributes (set on the instance) must not shadow the library's."""
    ours = {"_watch", "_watched", "_secret_file", "_scratch", "_attempts", "_place_now",
            "guard_name", "guard_secret", "limits", "student", "made", "prepare_launch",
            "launch_command", "kernel_started", "before_cleanup", "after_cleanup"}
    assert not ours & (set(dir(AsyncKernelManager)) | set(vars(AsyncKernelManager())))


class _Recording(GradingKernelManager):
    """A graded kernel manager that writes down which hook ran, in order."""

    calls: list[str]

    async def prepare_launch(self, kw):
        self.calls.append("prepare_launch")
        await super().prepare_launch(kw)

    async def launch_command(self, cmd, kw):
        self.calls.append("launch_command")
        self.command, kw = await super().launch_command(cmd, kw)
        return self.command, kw

    def kernel_started(self):
        self.calls.append("kernel_started")
        super().kernel_started()
        self.seen = (kernel_pgid(self), kernel_process(self))

    def before_cleanup(self):
        self.calls.append("before_cleanup")
        super().before_cleanup()

    def after_cleanup(self):
        self.calls.append("after_cleanup")
        super().after_cleanup()


def test_a_real_kernel_start_and_shutdown_run_every_launch_hook_in_order():
    manager = _Recording(kernel_name="python3")
    manager.calls = []

    async def start_and_stop() -> bool:
        await manager.start_kernel()
        try:
            return await manager.is_alive()
        finally:
            await manager.shutdown_kernel(now=True)

    # A loop of its own, on a thread of its own: an earlier test in this worker process may
    # have left this thread's event loop marked running (nbclient's run_sync).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, start_and_stop()).result(timeout=120)
    assert manager.calls == ["prepare_launch", "launch_command", "kernel_started",
                             "before_cleanup", "after_cleanup"], manager.calls
    assert "course.sandbox.kernel" in manager.command  # the command jupyter_client ran
    pgid, process = manager.seen  # the local provisioner's attributes, while it ran
    assert isinstance(pgid, int) and pgid > 0
    assert process is not None and process.poll() is not None  # now gone
    assert manager._watch is None  # the watch started with the kernel ended with it


# ---------------------------------------------------------------- nbclient's cell timeout
def test_the_cell_timeout_overrides_only_get_timeout():
    assert _private(CellTimeout) == {"_get_timeout"}


def test_nbclient_still_asks_get_timeout_for_a_cells_limit():
    step = NotebookClient._get_timeout
    assert not inspect.iscoroutinefunction(step)
    assert list(inspect.signature(step).parameters) == ["self", "cell"]
    cell = nbformat.v4.new_code_cell("pass")
    assert NotebookClient(nbformat.v4.new_notebook(), timeout=7)._get_timeout(cell) == 7
    assert CellTimeout(nbformat.v4.new_notebook(), timeout=7)._get_timeout(cell) == 7
    assert "error_on_timeout" in NotebookClient.class_traits()


def test_the_executors_names_are_not_nbclients_or_nbgraders():
    ours = {"_started", "_cell_error", "_output_bytes", "_cut", "_limits", "_guard",
            "_kernel_tmp", "_student", "_report_breaches", "_after_cell", "budget_s",
            "start_budget", "cell_time_limit", "reset_output_cap", "mark_cut",
            "notebook_budget", "min_cell_s", "sandbox"}
    assert not ours & (set(dir(Execute)) | set(vars(Execute())))


# --------------------------------------------------------------- ipykernel's output stream
def test_ipykernel_output_streams_still_write_through_an_overridable_method():
    assert "write" in vars(OutStream) and not hasattr(OutStream, "__slots__")
    assert "string" in inspect.signature(OutStream.write).parameters
    assert not hasattr(vars(OutStream)["write"], "__set__")  # an instance attribute wins


# ------------------------------------------------------------------- one graded kernel
LOOK = """
import sys
from course.sandbox import intact
shell = get_ipython()
manager = shell.input_transformer_manager
print({
    "argv0": sys.argv[0],
    "stream": type(sys.stdout).__module__ + "." + type(sys.stdout).__name__,
    "missing": [n for n in intact.SHELL_LISTS + intact.SHELL_ATTRS if not hasattr(shell, n)]
    + [n for n in intact.MANAGER_LISTS if not hasattr(manager, n)]
    + [n for n in intact.METHODS if not any(n in vars(c) for c in type(shell).__mro__)],
    "callbacks": type(shell.events.callbacks).__name__,
    "flags": type(shell.compile.flags).__name__,
})
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One notebook graded by GradingExecute, the sandbox off, with a 4-second budget and
    a 100 KiB output limit."""
    test = nbformat.v4.new_code_cell("assert True")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t1",
                                 "points": 1, "locked": True}
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(LOOK), test,
        nbformat.v4.new_code_cell("import time\ntime.sleep(30)"),
        nbformat.v4.new_code_cell("print('after')"),
        nbformat.v4.new_code_cell("print('x' * 200_000)")])
    run = GradingExecute(timeout=30, notebook_budget=4, min_cell_s=1, sandbox="off",
                         allow_errors=True, interrupt_on_timeout=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_LIMIT_OUTPUT", "100K")
        run.preprocess(nb, {"metadata": {"path": str(tmp_path_factory.mktemp("graded"))}})
    return run, nb


def test_in_a_graded_kernel_the_launch_and_stream_overrides_are_in_effect(graded):
    _, nb = graded
    seen = ast.literal_eval(nb.cells[0].outputs[0].text)
    assert seen["argv0"].endswith(os.path.join("course", "sandbox", "kernel.py")), seen
    assert seen["stream"] == "ipykernel.iostream.OutStream", seen
    # the kernel's own print refused the flood (IPython wraps the write per cell, over it)
    flood = [o for o in nb.cells[4].outputs if o.output_type == "error"]
    assert [o.ename for o in flood] == ["OutputLimitExceeded"], nb.cells[4].outputs
    assert flood[0].evalue.startswith("this notebook printed past its output limit (100 KiB)")


def test_every_shell_attribute_the_guard_puts_back_still_exists(graded):
    _, nb = graded
    seen = ast.literal_eval(nb.cells[0].outputs[0].text)
    assert seen["missing"] == [], seen["missing"]
    assert seen["callbacks"] == "dict" and seen["flags"] == "int", seen


def test_the_budget_reaches_nbclient_through_get_timeout(graded):
    run, nb = graded
    errors = [o for o in nb.cells[2].outputs if o.output_type == "error"]
    assert errors and errors[-1].ename == "CellTimeoutError", nb.cells[2].outputs
    assert "4-second budget" in errors[-1].evalue, errors[-1].evalue
    assert nb.cells[3].outputs[0].text == "after\n"
    # nbconvert's synchronous execute_cell ran GradingExecute's (the guard was made)
    assert run._guard is not None


# ------------------------------------------------------------------ ipykernel's parent poller
def test_jpy_parent_pid_1_still_turns_ipykernels_parent_poller_off():
    code = ("from ipykernel.kernelapp import IPKernelApp\napp = IPKernelApp()\n"
            "app.init_poller()\nprint(app.parent_handle, app.poller)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "JPY_PARENT_PID": "1"}, timeout=60)
    assert done.stdout.split() == ["1", "None"], done.stdout + done.stderr
