"""What each varying dim of the loader's batch is: the batch size, a length, or a count.

- The batch's own tensors are those whose dim 0 is the same size as one another at every step;
  of several such groups, the one whose dim 0 takes the fewest sizes (images, tokens: one size,
  two with a short last batch), then the larger group, then the earlier tensor. Their dim 0 is
  the BATCH size, any other dim of theirs a LENGTH (a sequence length, an image side).
- Any other tensor's dim 0 is a COUNT: YOLO's targets are the boxes of every image of the batch
  concatenated (`torch.cat(labels, 0)`, one row a box), so their dim 0 varies with full batches.
  Padding those rows fixes it; drop_last does not.
- A short last batch: the batch size is smaller only at the last step of each pass over the
  loader, steps E-1, 2E-1, ... for E steps a pass (several epochs are several passes of one
  wrapped loop). Only then does `drop_last=True` remove the shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchport.shapes.sites import OUT, Site, VaryingDim, varying_dims

BATCH_SIZE, LENGTH, COUNT, OTHER = "batch size", "length", "count", "other"


@dataclass(frozen=True)
class BatchDim:
    varying: VaryingDim
    kind: str  # BATCH_SIZE, LENGTH, COUNT or OTHER
    short_last: bool = False  # BATCH_SIZE only: smaller in the last batch of each pass, nowhere else


def batch_dims(site: Site) -> list[BatchDim]:
    """The varying dims of a batch site (its tensors are on the OUT side), each with its kind."""
    varying = [dim for dim in varying_dims(site) if dim.side == OUT]
    if not varying:
        return []
    group = batch_group([signature[OUT] for signature in site.signatures])
    short = bool(group) and short_last_batch(site.history or [], min(group))
    found = []
    for dim in varying:
        if dim.position in group:
            kind = BATCH_SIZE if dim.dim == 0 else LENGTH
        else:
            kind = COUNT if dim.dim == 0 else OTHER
        found.append(BatchDim(dim, kind, short and kind == BATCH_SIZE))
    return found


def carried(varying: VaryingDim, dims: list[BatchDim]) -> bool:
    """Whether a call's varying dim looks carried from the batch's: the same sizes shifted
    (`x[:, :-1]`, a convolution without padding), scaled (a stride) or multiplied together
    (`logits.view(-1, vocab)`), within a tenth. Else the step made that size itself (a resize, a
    filter `t[mask]`, nonzero), and nothing done to the data removes it."""
    ranges = [(dim.varying.low, dim.varying.high) for dim in dims]
    ranges += [(a * c, b * d) for i, (a, b) in enumerate(ranges) for c, d in ranges[i + 1:]]
    low, high = varying.low, varying.high
    return any(low - a == high - b or abs(low / high - a / b) < 0.1 for a, b in ranges if b)


def batch_group(steps: list[tuple]) -> frozenset[int]:
    """The positions of the batch's own tensors, from each distinct step's shapes."""
    width = max((len(shapes) for shapes in steps), default=0)
    groups: dict[tuple, list[int]] = {}
    for position in range(width):
        sizes = tuple(_leading(shapes, position) for shapes in steps)
        if None not in sizes:
            groups.setdefault(sizes, []).append(position)
    if not groups:
        return frozenset()
    sizes, positions = min(groups.items(), key=lambda item: (len(set(item[0])), -len(item[1]), item[1][0]))
    return frozenset(positions)


def short_last_batch(history: list[tuple], position: int) -> bool:
    """Whether the batch size at `position` is smaller only at the last step of each pass."""
    sizes = [_leading(signature[OUT], position) for signature in history]
    known = [size for size in sizes if size is not None]
    if not known:
        return False
    full = max(known)
    short = [step for step, size in enumerate(sizes) if size is not None and size < full]
    if not short or short[0] < 1:
        return False
    every = short[0] + 1  # steps a pass
    return short == list(range(every - 1, len(sizes), every))


def _leading(shapes: tuple, position: int) -> int | None:
    """Dim 0 of the tensor at `position`, None where there is none (missing, or a scalar)."""
    if position >= len(shapes) or not len(shapes[position]):
        return None
    return shapes[position][0]
