"""The ratio table (terminal and ``results.md``), the machine description and the plot."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from importlib import metadata

from ._harness import Outcome

__all__ = ["machine", "markdown", "plot", "table"]

_PACKAGES = ("keyspace", "lmdb", "plyvel", "rocksdict", "foundationdb", "sortedcontainers", "grpcio")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> list[tuple[str, str]]:
    """What the numbers were measured on: CPU, cores, Python, library versions, date."""
    import sqlite3

    import lmdb

    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return [
        ("CPU", _cpu_model()),
        ("cores", str(os.cpu_count())),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", sys.version.split()[0]),
        ("engines", f"LMDB {'.'.join(map(str, lmdb.version()))}, SQLite {sqlite3.sqlite_version}"),
        ("packages", ", ".join(versions)),
        ("date", datetime.date.today().isoformat()),
    ]


def _verdict(o: Outcome) -> str:
    met = o.met
    if met is None:
        return ""
    if met:
        return "met"
    limit = o.ratio.target.limit  # type: ignore[union-attr]
    return f"MISSED by {abs(o.value / limit - 1) * 100:.0f}%"


def _rows(outcomes: list[Outcome]) -> list[tuple[str, str, str, str, str, str]]:
    rows = []
    for o in outcomes:
        target = o.ratio.target
        rows.append(
            (
                o.ratio.label,
                f"{o.value:.3f}",
                target.describe() if target else "",
                _verdict(o),
                f"{o.numerator_ns:,.0f}" + ("" if o.unit == "ns/op" else f" {o.unit}"),
                f"{o.denominator_ns:,.0f}" + ("" if o.unit == "ns/op" else f" {o.unit}"),
            )
        )
    return rows


_HEAD = ("ratio", "value", "target", "verdict", "keyspace ns/op", "competitor ns/op")


def table(outcomes: list[Outcome]) -> str:
    """A plain-text table of the ratios, one line each."""
    rows = [_HEAD, *_rows(outcomes)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD))]
    lines = []
    for i, row in enumerate(rows):
        pairs = enumerate(zip(row, widths, strict=True))
        cells = [c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in pairs]
        lines.append("  ".join(cells))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown(outcomes: list[Outcome], notes: list[str], command: str, analysis: str) -> str:
    """``results.md``: machine, how to reproduce, every ratio with its verdict, notes."""
    out = ["# keyspace benchmark results", ""]
    out.append(f"Produced by `{command}`. Ratios are keyspace / hand-written code on the raw binding")
    out.append("storing the same bytes (below 1: keyspace is faster); each is the median of per-round")
    out.append("ratios of interleaved rounds, each variant on a fresh store, GC off while timing.")
    out.append("")
    out.append("## Machine")
    out.append("")
    out.extend(f"- **{k}**: {v}" for k, v in machine())
    out.append("")
    out.append("## Ratios")
    out.append("")
    out.append("| " + " | ".join(_HEAD) + " |")
    out.append("|" + "---|" * len(_HEAD))
    out.extend("| " + " | ".join(row) + " |" for row in _rows(outcomes))
    out.append("")
    if notes:
        out.append("## Not run / remarks")
        out.append("")
        out.extend(f"- {n}" for n in notes)
        out.append("")
    if analysis:
        out.append(analysis.rstrip())
        out.append("")
    out.append("![ratios by store size](ratios.png)")
    out.append("")
    return "\n".join(out)


def plot(outcomes: list[Outcome], path: str) -> bool:
    """Plot every ratio that has a ``series`` against its store size; False if none."""
    series: dict[str, list[tuple[int, float]]] = {}
    for o in outcomes:
        if o.ratio.series and o.ratio.size:
            series.setdefault(o.ratio.series, []).append((o.ratio.size, o.value))
    if not series:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.axhline(1.1, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("other keys in the store")
    ax.set_ylabel("keyspace / hand-written raw")
    ax.set_title("Scope cost relative to raw LMDB, by store size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
