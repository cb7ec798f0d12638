"""nbgrader's Execute step as the course grades with it: budget, output cap, test guard,
sandbox.

``nbgrader_config.py`` puts :class:`GradingExecute` in place of nbgrader's ``Execute``
among ``Autograde``'s steps, so ``make grade``, ``make check`` and the hub's formgrader
grade alike. It brings together:

- the whole-notebook time budget (:mod:`course.sandbox.budget`);
- the grader's side of the output limit (:mod:`course.sandbox.output_cap`);
- tests the notebook cannot neuter, always on (:mod:`course.sandbox.guard`): every test
  cell runs through the test guard;
- the sandbox (``GradingExecute.sandbox``: ``auto``, the course's setting, sandboxes
  wherever bubblewrap works; ``COURSE_GRADING_SANDBOX=on|off`` overrides it; ``make
  check`` turns it off, ``make grade`` on when it can): each kernel starts with
  :class:`~course.sandbox.managers.SandboxedKernelManager`, else with
  :class:`~course.sandbox.managers.GradingKernelManager` (:mod:`course.sandbox.managers`);
- the limits of :mod:`course.sandbox.limits`, every breach said once on the student's row.
"""

from __future__ import annotations

import functools
import os
import tempfile

from nbclient.util import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Enum

from course.sandbox.budget import NotebookBudget
from course.sandbox.guard import TestGuard, answer_sources, declared_week, is_test
from course.sandbox.jail import sandboxed
from course.sandbox.limits import Limits, breach_of
from course.sandbox.managers import GradingKernelManager, SandboxedKernelManager
from course.sandbox.notes import note
from course.sandbox.output_cap import OutputCap


class GradingExecute(NotebookBudget, OutputCap, Execute):
    """nbgrader's Execute with a whole-notebook time budget, the output cap, the test
    guard and, where it can, the sandbox."""

    sandbox = Enum(["auto", "on", "off"], "off", help="run each kernel in the sandbox: "
                   "'auto' wherever bubblewrap works; COURSE_GRADING_SANDBOX overrides"
                   ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self.start_budget()
        if km is None:
            self.kernel_manager_class = (SandboxedKernelManager if sandboxed(self.sandbox)
                                         else GradingKernelManager)
        self._guard = None
        self.reset_output_cap(Limits.current(self.budget_s))  # a bad COURSE_LIMIT_*: here
        # The kernel's temporary files go to a folder of this notebook's own, removed once
        # the kernel is gone: grading shuts kernels down at once (nbgrader_config.py), so
        # the exit handlers that tidy a notebook's scratch folder never run. The sandbox
        # gives its kernels a scratch folder of their own instead.
        with tempfile.TemporaryDirectory(prefix="grading-tmp-",
                                         ignore_cleanup_errors=True) as kernel_tmp:
            self._kernel_tmp = kernel_tmp
            try:
                return super().preprocess(nb, resources, km)
            finally:
                if self._guard is not None:
                    self._guard.report()
                self._report_breaches(nb)

    def _report_breaches(self, nb) -> None:
        """One line per limit the notebook went past, on the student's row."""
        student = getattr(self.km, "student", None) or getattr(self, "_student", "?")
        said: set[str] = set()
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    breach = breach_of(output.get("ename"), output.get("evalue"),
                                       self._limits)
                    if breach and breach not in said:
                        said.add(breach)
                        note(f"{student}: {breach}")

    async def async_start_new_kernel(self, **kwargs):
        if self.kernel_manager_class is not SandboxedKernelManager and getattr(
                self, "_kernel_tmp", None):
            kwargs.setdefault("env", {**os.environ, "TMPDIR": self._kernel_tmp})
        if self.km is not None:
            self.km.limits = self._limits
        started = await super().async_start_new_kernel(**kwargs)
        self._student = getattr(self.km, "student", "?")
        return started

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient binds its own otherwise

    async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                 store_history=True):
        km = self.km
        if not is_test(cell) or not hasattr(km, "guard_name"):
            result = await super().async_execute_cell(cell, cell_index, execution_count,
                                                      store_history)
            self._after_cell(cell, cell_index)
            return result
        if self._guard is None:
            self._guard = TestGuard(self, km.guard_name, km.guard_secret,
                                    getattr(km, "student", "?"),
                                    declared_week(self.config, self.resources,
                                                  getattr(km, "student", "?")),
                                    answer_sources(self.nb))
        try:
            return await self._guard.run(cell, functools.partial(
                super().async_execute_cell, cell, cell_index, execution_count,
                store_history))
        finally:
            self._after_cell(cell, cell_index)

    def _after_cell(self, cell, cell_index: int) -> None:
        """The output limit's mark on the cell that went past it; and after a fork that
        the process limit refused, the kernel and everything it started are stopped: a
        fork bomb's children are copies of the kernel that never end, and the rest of
        the notebook cannot run beside them (its tests then score 0, the kernel dead)."""
        self.mark_cut(cell, cell_index)
        forked = any(o.get("output_type") == "error" and (breach_of(
            o.get("ename"), o.get("evalue"), self._limits) or "").startswith("hit the")
            for o in cell.get("outputs", []))
        if forked and self.km is not None:
            self.km.stop_now()

    execute_cell = run_sync(async_execute_cell)  # nbclient binds its own otherwise

