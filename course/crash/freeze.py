"""Freeze a real process in the middle of a step, wake it later, and see what it does.

A SIGKILL shows what a *dead* worker leaves behind. A frozen one (SIGSTOP, a
long GC pause, a VM migration, a laptop lid) is worse: it wakes up later and
carries on as if nothing had happened, after its leases ran out and someone
else took its work over.

- :class:`FrozenChild` forks a child that runs ``body()`` and stops itself
  with SIGSTOP wherever the body calls :func:`freeze_here`. The caller sees it
  stopped (:meth:`~FrozenChild.wait_frozen`), does what another process would
  do meanwhile, then :meth:`~FrozenChild.thaw` lets the child finish and returns
  what its body returned (``{"result": ...}``) or the error it raised
  (``{"error": "ErrorType: message"}``).
- :func:`frozen_worker_demo` is the whole story for a lesson: a worker is frozen
  in the middle of its charge (the provider has reserved the key, nothing is
  committed); a resumer finds the guard's record in flight, reconciles it by
  sending the same request with the same key, and the charge is made; then the
  frozen worker wakes up. With ``fenced=False`` (the design before fencing
  tokens) its late commit is a second charge; fenced, it is refused and the
  worker is told, in a sentence, that another process finished the step.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.base import fork
from course.durable import NeedsReconcile, guarded, reconcile
from course.world import KeyInUse, Ledger, World


def freeze_here() -> None:
    """Stop this process until someone sends SIGCONT."""
    os.kill(os.getpid(), signal.SIGSTOP)


class FrozenChild:
    """``body()`` in a forked child that is expected to freeze itself once."""

    def __init__(self, body: Callable[[], Any], *, timeout_s: float = 30) -> None:
        self.timeout_s = timeout_s
        self._read, write = os.pipe()

        def answering() -> None:
            os.close(self._read)
            try:
                answer: dict[str, Any] = {"result": body()}
            except Exception as error:
                answer = {"error": f"{type(error).__name__}: {error}"}
            os.write(write, json.dumps(answer, default=str).encode())

        self._child = fork.start(answering)
        self.pid = self._child.pid
        os.close(write)

    def wait_frozen(self) -> None:
        """Return once the child is stopped; raise if it ends or takes too long instead."""
        if self._child.wait_stopped(time.monotonic() + self.timeout_s):
            return
        if self._child.ended is not None:
            raise RuntimeError(f"the child ended (status {self._child.ended.status}) instead "
                               f"of freezing: {self._answer()}")
        self.kill()
        raise RuntimeError(f"the child did not freeze within {self.timeout_s:g} s")

    def thaw(self) -> dict[str, Any]:
        """SIGCONT, wait for the child to finish; ``{"result": ...}`` or ``{"error": ...}``."""
        self._child.cont()
        answer = self._answer()
        ended = self._child.wait()
        if ended.code != 0:
            raise RuntimeError(f"the thawed child did not finish cleanly (status {ended.status})")
        return answer

    def kill(self) -> None:
        self._child.kill()

    def _answer(self) -> dict[str, Any]:
        chunks = []
        while chunk := os.read(self._read, 1 << 16):
            chunks.append(chunk)
        os.close(self._read)
        return json.loads(b"".join(chunks) or b'{"error": "the child wrote nothing"}')


CHARGE = {"customer_id": "cus_ada", "invoice_id": "inv_9", "cents": 2900, "currency": "usd"}
PROVIDER_HOLD_S = 0.3  # how long the provider holds a key for a call that has not finished


@dataclass
class FrozenWorkerRun:
    """What :func:`frozen_worker_demo` saw."""

    fenced: bool
    resumer: str  # what reconcile said: "sent_now" (the frozen call had not committed)
    woken: dict[str, Any]  # what the frozen worker got when it woke up
    ledger: Ledger
    refused: list[str]  # the 409s (KeyInUse) the resumer got while the provider held the key

    @property
    def charges(self) -> int:
        return self.ledger.count("charges", CHARGE["invoice_id"])


def frozen_worker_demo(directory: str | Path, *, fenced: bool = True,
                       hold_s: float = PROVIDER_HOLD_S) -> FrozenWorkerRun:
    """Freeze a worker mid-charge, let a resumer reconcile and charge, wake the worker.

    Args:
        directory: an empty folder for the world's files.
        fenced: build the simulated provider with fencing tokens (see the module).
        hold_s: how long the provider holds a key for the frozen, unfinished call; the
            resumer's same request is refused with a 409 (``KeyInUse``) until then, and
            each refusal is kept in :attr:`FrozenWorkerRun.refused`.

    Returns:
        What the resumer, the woken worker and the bank's ledger saw.

    Raises:
        RuntimeError: the worker did not freeze, or the resumer found no charge in flight.
    """
    directory = Path(directory)
    World(directory).close()

    def capture(world: World) -> Callable[..., Any]:
        def charge(idem_key: str, **args: Any) -> Any:
            return world.billing.charge(**args, idempotency_key=idem_key)
        return charge

    def worker() -> Any:
        world = World(directory, in_flight_lease_s=hold_s, fenced=fenced,
                      on_processing=freeze_here)
        return guarded("demo", "charge", capture(world), CHARGE, store=world.records)

    refused: list[str] = []
    frozen = FrozenChild(worker)
    try:
        frozen.wait_frozen()
        world = World(directory, in_flight_lease_s=hold_s, fenced=fenced)
        try:
            guarded("demo", "charge", capture(world), CHARGE, store=world.records)
        except NeedsReconcile:
            pass  # expected: the frozen worker's intent is in flight
        else:
            raise RuntimeError("the resumer expected the charge to be in flight")
        while True:
            try:  # the Stripe way: the same request, the same key
                said = reconcile("demo", "charge", world.resend("charge"), store=world.records)
                break
            except KeyInUse as error:  # 409 while the provider holds the key for the frozen call
                refused.append(f"{type(error).__name__}: {error}")
                time.sleep(hold_s / 4)
    finally:
        woken = frozen.thaw()
    ledger = world.ledger()
    world.close()
    return FrozenWorkerRun(fenced, said, woken, ledger, refused)
