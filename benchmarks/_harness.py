"""Workload registry, interleaved timing and ratios.

A *workload* is a generator function registered with :func:`workload`; it receives a
:class:`Context` and yields :class:`Comparison` objects. A comparison names its
*variants* (factories that build a fresh :class:`Trial`: its own store, its keys
prepared in the order they are used) and the *ratios* to report between them.

Timing: every round runs each variant once, alternating the order (ABAB… then
BABA…) so drift and cache warmth hit all variants alike; the collector is off in
the timed body; a variant's figure is the median over rounds of ns per operation,
and a ratio is the median over rounds of the per-round ratio (paired, so slow
phases of the machine cancel). Cost of the harness itself: one ``perf_counter_ns``
pair and one ``gc.disable``/``gc.enable`` per variant per round.
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

__all__ = [
    "Comparison",
    "Context",
    "Outcome",
    "Ratio",
    "Target",
    "Trial",
    "WorkloadFn",
    "measure",
    "registry",
    "workload",
]


def _nothing() -> None:
    return None


@dataclass
class Trial:
    """One timed run: ``run()`` performs ``ops`` operations; ``close()`` (untimed)
    releases what the trial made (commits or aborts a transaction, closes a store)."""

    run: Callable[[], object]
    ops: int
    close: Callable[[], object] = _nothing


Factory = Callable[[], Trial]


@dataclass(frozen=True)
class Target:
    """A bound on a ratio: ``ratio <= limit`` (``at_most``) or ``ratio >= limit``."""

    limit: float
    at_most: bool = True
    text: str = ""

    def met(self, ratio: float) -> bool:
        return ratio <= self.limit if self.at_most else ratio >= self.limit

    def describe(self) -> str:
        return self.text or f"{'≤' if self.at_most else '≥'} {self.limit:g}"


@dataclass(frozen=True)
class Ratio:
    """Report ``numerator / denominator`` (variant names) under ``label``.

    ``series`` and ``size`` place the ratio on the plot (store size on the x axis)."""

    label: str
    numerator: str
    denominator: str
    target: Target | None = None
    series: str | None = None
    size: int | None = None


@dataclass
class Comparison:
    """Variants measured side by side, and the ratios to report between them."""

    group: str
    name: str
    variants: dict[str, Factory]
    ratios: list[Ratio]
    rounds: int | None = None  # overrides the context's rounds (for slow variants)
    measured: dict[str, float] | None = None
    """Figures measured by the workload itself (not times; ``variants`` unused)."""
    unit: str = "ns/op"


@dataclass
class Outcome:
    """A measured ratio: the median of per-round ratios and both medians in ns/op."""

    group: str
    comparison: str
    ratio: Ratio
    value: float
    numerator_ns: float
    denominator_ns: float
    rounds: int
    unit: str = "ns/op"

    @property
    def met(self) -> bool | None:
        target = self.ratio.target
        return None if target is None else target.met(self.value)


@dataclass
class Context:
    """What a workload needs: the mode, sizes, a temporary directory per store and
    a place to register clean-ups (run when the workload is done)."""

    quick: bool
    rounds: int
    stack: ExitStack = field(default_factory=ExitStack)
    notes: list[str] = field(default_factory=list)

    def n(self, full: int, quick: int) -> int:
        """``full`` keys normally, ``quick`` with ``--quick``."""
        return quick if self.quick else full

    @property
    def fine(self) -> int | None:
        """Rounds for comparisons of short trials (10-20 ms: point operations and
        short scans over 2,000-20,000 keys): three times the usual, so that their
        medians settle despite the machine's noise; ``None`` (the usual) with
        ``--quick``."""
        return None if self.quick else 3 * self.rounds

    def tmpdir(self) -> str:
        """A fresh temporary directory, removed when the workload ends."""
        return self.stack.enter_context(tempfile.TemporaryDirectory(prefix="ksbench-"))

    def defer(self, fn: Callable[[], object]) -> None:
        """Call ``fn`` when the workload ends (close a store shared by rounds)."""
        self.stack.callback(fn)

    def note(self, text: str) -> None:
        """Record a remark for the report (e.g. a workload that was not run, and why)."""
        self.notes.append(text)


WorkloadFn = Callable[[Context], Iterator[Comparison]]

_REGISTRY: dict[str, WorkloadFn] = {}


def workload(name: str) -> Callable[[WorkloadFn], WorkloadFn]:
    """Register a workload under ``name`` (the ``--only`` argument)."""

    def register(fn: WorkloadFn) -> WorkloadFn:
        if name in _REGISTRY:
            raise ValueError(f"workload {name!r} registered twice")
        _REGISTRY[name] = fn
        return fn

    return register


def registry() -> dict[str, WorkloadFn]:
    """Every registered workload by name, in registration order."""
    return dict(_REGISTRY)


def _time(factory: Factory) -> float:
    """Build a trial, run it with the collector off, return ns per operation."""
    trial = factory()
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        trial.run()
        elapsed = time.perf_counter_ns() - t0
    finally:
        gc.enable()
        trial.close()
    return elapsed / trial.ops


def measure(comparison: Comparison, rounds: int, warmup: bool = True) -> list[Outcome]:
    """Run the variants of ``comparison`` interleaved for ``rounds`` rounds (after
    one untimed warm-up round when ``warmup``) and compute its ratios; a comparison
    with ``measured`` figures takes them as its one round."""
    if comparison.measured is not None:
        samples = {name: [value] for name, value in comparison.measured.items()}
        rounds, warmup = 1, False
    else:
        samples = {name: [] for name in comparison.variants}
    names = list(comparison.variants)
    if warmup:
        for name in names:
            _time(comparison.variants[name])
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            samples[name].append(_time(comparison.variants[name]))
    outcomes = []
    for ratio in comparison.ratios:
        num, den = samples[ratio.numerator], samples[ratio.denominator]
        paired = [a / b for a, b in zip(num, den, strict=True)]
        outcomes.append(
            Outcome(
                group=comparison.group,
                comparison=comparison.name,
                ratio=ratio,
                value=statistics.median(paired),
                numerator_ns=statistics.median(num),
                denominator_ns=statistics.median(den),
                rounds=rounds,
                unit=comparison.unit,
            )
        )
    return outcomes
