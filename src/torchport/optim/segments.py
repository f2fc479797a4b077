"""Per-parameter reductions over a flat buffer, without a loop over parameters.

The engine lays same-shape parameters side by side, so a run of k parameters of n elements each,
``s`` elements apart, is one strided ``(k, n)`` view of the flat buffer. A per-parameter norm is then
one ``vector_norm(dim=1)`` per distinct shape, and a per-parameter factor one broadcast multiply,
with no host synchronisation and no Python loop over parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch


@dataclass(frozen=True)
class Block:
    """``count`` same-shape segments, ``spacing`` elements apart, starting ``start`` elements into
    the run."""

    start: int
    count: int
    numel: int
    spacing: int
    shape: tuple
    strides: tuple
    # True when dim 0 is the outermost dimension in memory: row i of ``x.reshape(size0, -1)`` is
    # then a contiguous slice of the segment (contiguous and channels_last layouts both are).
    rows_outer: bool

    def matrix(self, flat_run: torch.Tensor) -> torch.Tensor:
        """The block as a ``(count, numel)`` view of a run-sized flat tensor."""
        return flat_run.as_strided((self.count, self.numel), (self.spacing, 1),
                                   flat_run.storage_offset() + self.start)

    def rows(self, flat_run: torch.Tensor) -> torch.Tensor:
        """The block as ``(count, size0, numel / size0)``: each parameter's channel view."""
        size0 = self.shape[0] if self.shape else 1
        width = self.numel // size0 if size0 else 0
        return flat_run.as_strided((self.count, size0, width), (self.spacing, width, 1),
                                   flat_run.storage_offset() + self.start)


def blocks_of(segments: Sequence, run_start: int) -> list[Block]:
    """Groups consecutive segments with equal shape, strides and spacing into blocks."""
    blocks: list[Block] = []
    i = 0
    n = len(segments)
    while i < n:
        first = segments[i]
        j = i + 1
        spacing = 0
        while j < n and segments[j].shape == first.shape and segments[j].stride == first.stride:
            gap = segments[j].offset - segments[j - 1].offset
            if spacing == 0:
                spacing = gap
            elif gap != spacing:
                break
            j += 1
        count = j - i
        blocks.append(Block(first.offset - run_start, count, first.numel,
                            spacing if count > 1 else max(first.numel, 1), first.shape,
                            first.stride, _rows_outer(first)))
        i = j
    return blocks


def _rows_outer(seg) -> bool:
    if len(seg.shape) == 0 or seg.shape[0] <= 1:
        return True
    return seg.stride[0] * seg.shape[0] == seg.numel


def segment_norms(blocks: Sequence[Block], flat_run: torch.Tensor) -> torch.Tensor:
    """L2 norm of every segment of a run, in segment order, as one 1-D tensor."""
    return torch.cat([torch.linalg.vector_norm(b.matrix(flat_run), 2, dim=1) for b in blocks])


def split_per_block(values: torch.Tensor, blocks: Sequence[Block]) -> list[torch.Tensor]:
    """Splits a per-segment vector into per-block column vectors ``(count, 1)``."""
    return [v.unsqueeze(1) for v in values.split([b.count for b in blocks])]
