"""Run the crash harness with another durability mode than ``"sync"``.

The harness invokes every graph with ``durability="sync"`` (every checkpoint is
on disk before the next step starts), which is what every crash test should
use. Week 3 compares the three modes, so :func:`with_durability` wraps a graph
factory: the graphs it builds run ``invoke`` with the mode you chose, whatever
the caller asked for, and behave like the wrapped graph in every other way.

- ``"sync"``: each checkpoint is written before the next step runs.
- ``"async"``: each checkpoint is written in the background while the next step
  runs (LangGraph's default): a kill can lose the newest ones.
- ``"exit"``: checkpoints are written only when the run ends (finishes, fails or
  pauses): a kill mid-run leaves nothing to resume from.
"""

from __future__ import annotations

from typing import Any

from course.crash.harness import Factory, resolve_factory

MODES = ("sync", "async", "exit")


class _FixedDurability:
    """A compiled graph whose ``invoke`` always uses one durability mode."""

    def __init__(self, graph: Any, mode: str) -> None:
        self._graph = graph
        self.durability = mode

    def invoke(self, payload: Any, config: Any = None, **kwargs: Any) -> Any:
        kwargs["durability"] = self.durability
        return self._graph.invoke(payload, config, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def with_durability(factory: Factory | str, mode: str) -> Factory:
    """``factory`` whose graphs run with ``durability=mode`` (one of :data:`MODES`)."""
    if mode not in MODES:
        raise ValueError(f"unknown durability mode {mode!r}; choose one of {', '.join(MODES)}")
    build = resolve_factory(factory)

    def factory_with_mode(world: Any, checkpointer: Any) -> Any:
        return _FixedDurability(build(world, checkpointer), mode)

    factory_with_mode.__name__ = f"{getattr(build, '__name__', 'graph')}[{mode}]"
    return factory_with_mode
