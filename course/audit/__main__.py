"""``python -m course.audit [module:builder | --graph naive|keyed]``

Crashes the graph at every node and crash point (real SIGKILLs, resume in a
new process), prints one row per side effect it observed and ends with
``effects=<n> keyed=<k> repeatable=<r>``. Exit status 0 when no effect is
repeatable, 1 when one is, 2 when the audit could not run (one-line error).
"""

from __future__ import annotations

import argparse
import sys

from course.audit.auditor import AuditError, audit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.audit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builder", nargs="?",
                        help="package.module:builder, a function builder(world, checkpointer)")
    parser.add_argument("--graph", choices=("naive", "keyed"),
                        help="one of the reference graphs instead of a builder")
    parser.add_argument("--keep", metavar="DIR", help="keep the run directories under DIR")
    args = parser.parse_args(argv)
    if (args.builder is None) == (args.graph is None):
        parser.error("give a module:builder or --graph naive|keyed (one of them)")
    if args.builder:
        sys.path.insert(0, "")  # the student's module in the current folder
    try:
        report = audit(args.graph or args.builder, root=args.keep)
    except AuditError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report)
    return 1 if report.repeatable else 0


if __name__ == "__main__":
    raise SystemExit(main())
