"""``python -m benchmarks [--quick] [--no-write] [--only NAME ...]``.

Runs every registered workload (or those named with ``--only``), prints the table
of ratios, and unless ``--no-write`` writes ``benchmarks/results.md`` and
``benchmarks/ratios.png``. ``--quick`` uses tiny sizes and two rounds: it checks
that everything runs and says nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from . import (  # noqa: F401  (registration)
    accounting,
    bulk,
    changes,
    codecs,
    collections,
    cosmwasm,
    directory,
    etcd,
    etcd_watch,
    foreign,
    layouts,
    scaling,
    scoped_heed,
    startup,
    stores,
)
from ._harness import Context, Outcome, measure, registry
from .report import markdown, plot, table

_HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, two rounds; asserts nothing")
    parser.add_argument("--no-write", action="store_true", help="do not write results.md and ratios.png")
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this workload (repeatable)")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per comparison")
    args = parser.parse_args(argv)

    workloads = registry()
    names = args.only or list(workloads)
    unknown = [n for n in names if n not in workloads]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(workloads)}")
    rounds = args.rounds or (2 if args.quick else 7)

    outcomes: list[Outcome] = []
    notes: list[str] = []
    started = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        ctx = Context(quick=args.quick, rounds=rounds)
        with ctx.stack:
            for comparison in workloads[name](ctx):
                got = measure(comparison, comparison.rounds or rounds, warmup=not args.quick)
                outcomes.extend(got)
                for o in got:
                    print(f"  {o.group:8} {o.ratio.label:45} {o.value:7.3f}", flush=True)
        notes.extend(f"{name}: {n}" for n in ctx.notes)
        for n in ctx.notes:
            print(f"  {name}: {n}", flush=True)
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]", flush=True)

    print()
    print(table(outcomes))
    print(f"\n{len(outcomes)} ratios in {time.perf_counter() - started:.0f} s", flush=True)
    missed = [o for o in outcomes if o.met is False]
    if missed:
        print("targets missed: " + ", ".join(o.ratio.label for o in missed))
    if args.quick:
        print("quick mode (tiny sizes, few rounds): the harness ran; its verdicts mean nothing,")
        print("`make bench` measures the targets")
    if not args.no_write:
        command = "python -m benchmarks" + (" --quick" if args.quick else "")
        if args.only:
            command += "".join(f" --only {n}" for n in args.only)
        analysis_path = os.path.join(_HERE, "analysis.md")
        analysis = ""
        if os.path.exists(analysis_path):
            with open(analysis_path, encoding="utf-8") as f:
                analysis = f.read()
        with open(os.path.join(_HERE, "results.md"), "w", encoding="utf-8") as f:
            f.write(markdown(outcomes, notes, command, analysis))
        plot(outcomes, os.path.join(_HERE, "ratios.png"))
        print("wrote benchmarks/results.md and benchmarks/ratios.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
