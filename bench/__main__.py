"""``python -m bench [--quick] [--only NAME ...] [--out DIR]``

Runs the benchmarks side by side, prints each block as it finishes, and writes
``results.json`` (every sample), ``results.csv`` (one row per comparison) and
``results.png`` (the ratios against their targets) to ``bench/results/``.
Exit status 1 when a benchmark failed (for example, the two sides of a
comparison ended with different results); the others still run.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib
import json
import os
import platform
import sqlite3
import sys
import time
from pathlib import Path

from bench.common import Comparison

BENCHMARKS = ("fork_vs_fresh", "guard_cost", "notebooks", "fuzz_rate", "grading", "learner",
              "site")
RESULTS = Path(__file__).resolve().parent / "results"


def header() -> dict[str, str | int | None]:
    return {"date": dt.datetime.now().isoformat(timespec="seconds"),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version, "platform": platform.platform(),
            "load average": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where results go")
    args = parser.parse_args(argv)

    info = header()
    print(f"bench: {info['cores']} cores, Python {info['python']}, SQLite {info['sqlite']}, "
          f"load average {info['load average']} ({info['date']})")
    print("ratios of medians measured side by side in this run; targets are reported, "
          "never asserted\n")
    comparisons: list[Comparison] = []
    failed: list[str] = []
    for name in args.only or BENCHMARKS:
        module = importlib.import_module(f"bench.{name}")
        title = getattr(module, "TITLE", name)
        print(f"[{name}] {title}", flush=True)
        started = time.monotonic()
        try:
            found = module.run(quick=args.quick)
        except Exception as error:  # one broken benchmark must not hide the others
            print(f"  FAILED: {type(error).__name__}: {error}\n", flush=True)
            failed.append(name)
            continue
        for comparison in found:
            print("\n".join(comparison.lines()))
        print(f"  ({time.monotonic() - started:.0f} s)\n", flush=True)
        comparisons += found
    write(comparisons, info, args.out)
    print(f"results: {args.out}/results.json, results.csv, results.png")
    if failed:
        print(f"bench: FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def write(comparisons: list[Comparison], info: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"machine": info, "comparisons": [c.to_json() for c in comparisons]}, indent=1,
        default=str))
    rows = [c.row() for c in comparisons]
    with (out / "results.csv").open("w", newline="") as file:
        columns = ["benchmark", "subject", "baseline", "unit", "subject_median",
                   "baseline_median", "ratio", "target", "target_is_max", "met", "n_subject",
                   "n_baseline"]
        writer = csv.DictWriter(file, columns)
        writer.writeheader()
        writer.writerows(rows)
    plot(comparisons, info, out / "results.png")


def plot(comparisons: list[Comparison], info: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [c for c in comparisons if c.ratio == c.ratio]  # drop NaN (e.g. a failed notebook)
    height = max(2.5, 0.55 * len(shown) + 1.4)
    fig, ax = plt.subplots(figsize=(10, height))
    colours = {True: "#2e7d32", False: "#c62828", None: "#78909c"}
    labels = [f"{c.subject}\nvs {c.baseline}" for c in shown]
    ys = range(len(shown))
    ax.barh(ys, [c.ratio for c in shown], color=[colours[c.met] for c in shown])
    for y, c in zip(ys, shown, strict=True):
        ax.text(c.ratio, y, f" {c.ratio:.2f}x", va="center", fontsize=8)
        if c.target is not None:
            ax.plot([c.target, c.target], [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="#bbbbbb", linewidth=0.8)
    ax.set_xlabel("ratio of medians (log scale); black tick = target; "
                  "green met, red not met, grey no target")
    ax.set_title(f"python -m bench: {info['cores']} cores, Python {info['python']}, "
                 f"load {info['load average']} ({info['date']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
