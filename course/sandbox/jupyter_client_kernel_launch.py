"""jupyter_client's private launch steps, turned into hooks the graded kernel managers use.

What it works around: jupyter_client gives a kernel manager no public place to change the
command line a kernel starts with, its environment, or where its connection lives, nor
to act once the kernel is up and once it is gone. The graded kernels need all of it
(:mod:`course.sandbox.managers`: the kernel starts through :mod:`course.sandbox.kernel`,
inside bubblewrap, with an allow-listed environment; a watch starts with it; its scratch
folder and pipe go with it). jupyter_client's own steps for that are underscore methods of
``KernelManager`` (async in ``AsyncKernelManager``), which ``_async_start_kernel`` and the
shutdown path call:

- ``_async_pre_start_kernel(**kw) -> (cmd, kw)``: builds the provisioner and the command;
- ``_async_post_start_kernel(**kw)``: connects the control socket, once the process runs;
- ``_async_cleanup_resources(restart=False)``: removes the connection file and sockets.

:class:`LaunchHooks` overrides those three, and only those, here; the managers override
its plain methods instead (:meth:`~LaunchHooks.prepare_launch`,
:meth:`~LaunchHooks.launch_command`, :meth:`~LaunchHooks.kernel_started`,
:meth:`~LaunchHooks.before_cleanup`, :meth:`~LaunchHooks.after_cleanup`). It also reads
the local provisioner's ``pgid`` and ``process`` (:func:`kernel_pgid`,
:func:`kernel_process`), public attributes of ``LocalProvisioner`` that no API promises.

Written against: jupyter_client 8.10.0.
Upstream: no upstream issue; the hooks are private, and they have moved before: qtconsole's
override of ``post_start_kernel`` broke when jupyter_client 7.0 made it async
(https://github.com/spyder-ide/qtconsole/pull/494,
https://github.com/jupyter/jupyter_client/pull/670).
tests/test_upstream_sandbox.py fails when any of it changes underneath.
"""

from __future__ import annotations

from typing import Any

from jupyter_client.manager import AsyncKernelManager


class LaunchHooks(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose private launch and cleanup steps call plain hooks."""

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        await self.prepare_launch(kw)
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        return await self.launch_command(cmd, kw)

    async def _async_post_start_kernel(self, **kw: Any) -> None:
        await super()._async_post_start_kernel(**kw)
        self.kernel_started()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        self.before_cleanup()
        await super()._async_cleanup_resources(restart=restart)
        self.after_cleanup()

    # ------------------------------------------------------------ the hooks (no-ops here)
    async def prepare_launch(self, kw: dict[str, Any]) -> None:
        """Before jupyter_client writes the connection file and builds the command: set
        the transport, the address, the interrupt mode. ``kw``: the launch's arguments
        (``cwd``, ``env``...), which this may read but not replace."""

    async def launch_command(self, cmd: list[str], kw: dict[str, Any]
                             ) -> tuple[list[str], dict[str, Any]]:
        """The command the kernel starts with, and the arguments it is started with
        (``env``, ``cwd``...), from jupyter_client's own."""
        return cmd, kw

    def kernel_started(self) -> None:
        """Once the kernel's process runs (and its control socket is connected)."""

    def before_cleanup(self) -> None:
        """Once the kernel is gone, before its connection file and sockets are removed."""

    def after_cleanup(self) -> None:
        """After jupyter_client removed the kernel's connection file and sockets."""


def kernel_pgid(manager: AsyncKernelManager) -> int | None:
    """The process group of ``manager``'s kernel (the local provisioner's ``pgid``)."""
    return getattr(getattr(manager, "provisioner", None), "pgid", None)


def kernel_process(manager: AsyncKernelManager) -> Any:
    """The ``Popen`` of ``manager``'s kernel (the local provisioner's ``process``)."""
    return getattr(getattr(manager, "provisioner", None), "process", None)
