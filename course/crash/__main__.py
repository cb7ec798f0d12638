"""``python -m course.crash matrix --graph naive|keyed|module:factory``

Runs every node x every crash point it reaches (see
:data:`course.base.crashpoints.POINTS`) of the CloudWave graph, each a real
SIGKILL followed by resume in a new process, prints a table and ends with
``scenarios=<n> double_charges=<d> lost=<l>``.
"""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from course.base.crashpoints import POINTS
from course.base.table import Table
from course.cloudwave.graph import LINEAR_FLOW
from course.crash.harness import CrashHarness


def matrix(graph: str, nodes: tuple[str, ...] = LINEAR_FLOW, root: str | None = None,
           progress: bool = True) -> list:
    harness = CrashHarness(graph, root=root)
    cases = [(node, point) for node in nodes for point in reachable(harness, nodes)[node]]
    results = []
    for node, point in tqdm(cases, desc=f"crash matrix ({graph})", unit="kill",
                            disable=not progress, file=sys.stderr):
        results.append(harness.run(node, point))
    return results


def reachable(harness: CrashHarness, nodes: tuple[str, ...]) -> dict[str, list[str]]:
    """The crash points each node really reaches, from one unkilled run of the graph.

    Only a node that calls ``guarded`` reaches ``before_record``; a point a node
    never reaches would be a kill that never lands, so it is left out.
    """
    clean = harness.run().attempts[0].reached
    reached, seen = set(clean), list(dict.fromkeys(node for node, _ in clean))
    for node in nodes:
        if node not in seen:  # a node the graph does not have: its kills could never land
            raise ValueError(f"the {harness.name} graph has no node {node!r}; "
                             f"choose one of {', '.join(seen)}")
    return {node: [p for p in POINTS if (node, p) in reached] for node in nodes}


def summary(results: list) -> str:
    return (f"scenarios={len(results)} "
            f"double_charges={sum(r.double_charge for r in results)} "
            f"lost={sum(r.lost for r in results)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.crash", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("matrix", help="every node x every crash point")
    m.add_argument("--graph", default="keyed",
                   help="naive, keyed, or package.module:factory (factory(world, checkpointer))")
    m.add_argument("--keep", metavar="DIR", help="keep the run directories under DIR")
    m.add_argument("--no-progress", action="store_true")
    _add_fuzz(commands)
    args = parser.parse_args(argv)
    if args.command == "matrix":
        try:
            results = matrix(args.graph, root=args.keep, progress=not args.no_progress)
        except ValueError as error:  # an unknown graph, or a graph without these nodes
            print(f"python -m course.crash matrix: {error}", file=sys.stderr)
            return 2
        print(Table([r.row() for r in results], title=f"crash matrix: {args.graph} graph"))
        print(summary(results))
        return 0
    return args.run(args)


def _add_fuzz(commands) -> None:
    """The fuzzer registers itself here once it exists (see course.crash.fuzz)."""
    try:
        from course.crash import fuzz
    except ImportError:
        return
    fuzz.add_command(commands)


if __name__ == "__main__":
    raise SystemExit(main())
