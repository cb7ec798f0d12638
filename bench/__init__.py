"""Benchmarks: costs measured side by side in one run, printed as ratios.

``python -m bench`` (``make bench``) runs every benchmark, prints a header
with the machine (cores, Python, SQLite), one block per benchmark with the
medians and their ratio next to the target, and writes the results to
``bench/results/`` as JSON, CSV and a PNG plot. Nothing here is asserted in
tests: speed is measured, never asserted.

One module per benchmark, each with ``run(quick: bool) -> list[Comparison]``:

- :mod:`bench.fork_vs_fresh`: one crash scenario forked from a warm parent
  versus the same worker in fresh interpreters;
- :mod:`bench.guard_cost`: a guarded side effect versus raw SQLite commits and
  versus a LangGraph SqliteSaver step;
- :mod:`bench.notebooks`: each solution notebook executed headless versus an
  empty notebook;
- :mod:`bench.fuzz_rate`: crash-fuzz throughput in kills per second;
- :mod:`bench.grading`: ``make grade`` per submission and ``make check`` against a bare
  nbclient run (wall and CPU), the 2-worker speed-up, nbgrader's start-up per command.

``python -m bench --only grading`` runs one of them.
"""
