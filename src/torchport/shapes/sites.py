"""One call site's shapes, iteration by iteration, and the ranges the report prints.

A site is dynamic when the *set* of signatures it sees in one iteration differs between
iterations. A set, not a sequence: a helper called twice per step with two fixed shapes, or an
RNN cell run once per time step, sees the same shapes every step and is compiled once for each;
only a shape that comes and goes from step to step makes a compiler start again.

The loader's batch site also keeps its shapes in step order (`history`): whether a smaller batch
comes only at the end of each pass over the data (a short last batch) is a question of order.
"""

from __future__ import annotations

from dataclasses import dataclass

IN, OUT = 0, 1
BATCH = "DETECTOR.start (batch)"  # the function name of the loader's batches, a site of their own


class Site:
    __slots__ = ("file", "line", "column", "function", "stack", "paths",
                 "first", "current", "seen_in", "signatures", "iterations", "dynamic", "history")

    def __init__(self, file: str, line: int, column: int, function: str, stack: str, paths=()) -> None:
        self.file, self.line, self.column, self.function, self.stack = file, line, column, function, stack
        self.paths = tuple(paths)  # names of the tensors, for a batch: ("batch[0]", ...)
        self.first: frozenset | None = None  # the signatures of the first iteration it was seen in
        self.current: set | None = None  # this iteration's, while it runs
        self.seen_in = -1  # the iteration `current` belongs to
        self.signatures: set = set()  # every (input shapes, output shapes) of finished iterations
        self.iterations = 0
        self.dynamic = False
        self.history: list | None = [] if function == BATCH else None  # each step's signature, in order

    def commit(self) -> None:
        """The iteration finished: compare its shapes with the first iteration's."""
        current = self.current
        if self.first is None:
            self.first = frozenset(current)
        elif current != self.first:
            self.dynamic = True
        self.signatures |= current
        if self.history is not None:
            self.history.extend(current)  # a batch site sees one signature a step
        self.iterations += 1
        self.current = None

    def discard(self) -> None:
        """The iteration was cut short (an exception, a break): what it saw is not evidence."""
        self.current = None
        self.seen_in = -1


@dataclass(frozen=True)
class VaryingDim:
    side: int  # IN or OUT
    position: int  # which tensor of the call (in the order found)
    dim: int
    low: int
    high: int

    @property
    def label(self) -> str:
        """`input 1 dim 0: 3..41`: which tensor of the call, which of its dims, over which sizes."""
        return f"{'input' if self.side == IN else 'output'} {self.position} dim {self.dim}: {self.low}..{self.high}"


def shape_range(site: Site, side: int) -> str:
    """Ascend's format: `[(5,)-(8,)]`, min-max per dimension, one group per tensor (`, `), and
    ` / ` between groups of different rank at one position."""
    groups = []
    for by_rank in _positions(site, side):
        groups.append(" / ".join(f"{tuple(low)}-{tuple(high)}" for _, (low, high) in sorted(by_rank.items())))
    return "[" + ", ".join(groups) + "]"


def varying_dims(site: Site) -> list[VaryingDim]:
    found = []
    for side in (IN, OUT):
        for position, by_rank in enumerate(_positions(site, side)):
            for _, (low, high) in sorted(by_rank.items()):
                found += [VaryingDim(side, position, dim, a, b)
                          for dim, (a, b) in enumerate(zip(low, high)) if a != b]
    return found


def _positions(site: Site, side: int) -> list[dict[int, tuple[list, list]]]:
    """Per tensor position: rank -> (min shape, max shape) over every signature."""
    positions: list[dict] = []
    for signature in site.signatures:
        for position, shape in enumerate(signature[side]):
            if position == len(positions):
                positions.append({})
            by_rank = positions[position]
            if len(shape) not in by_rank:
                by_rank[len(shape)] = (list(shape), list(shape))
            else:
                low, high = by_rank[len(shape)]
                for dim, size in enumerate(shape):
                    low[dim] = min(low[dim], size)
                    high[dim] = max(high[dim], size)
    return positions
