"""What to do about a dynamic shape, per target: the report's Remedy column and the summary's advice.

- Each target with a remedy of its own (its `advice.varying_shapes`): the NPU's is one line of
  configuration that makes torch_npu use binary (precompiled) kernels, not compiled again for
  each new shape.
- torch.compile: `torch._dynamo.mark_dynamic(t, dim)` for each dim found to vary, so that one
  graph with a symbolic size serves them all.
- The data itself: `torchport.shapes.pad_to_buckets`, a collate function that pads the varying
  dims up to a few sizes, so that N shapes become as many as there are buckets, on every target.
"""

from __future__ import annotations

import math

from torchport.shapes.sites import OUT, Site, VaryingDim, varying_dims

BUCKETS = "torchport.shapes.pad_to_buckets"


def suggest_buckets(low: int, high: int, most: int = 4) -> list[int]:
    """A few sizes that cover low..high: multiples of a power of two, about `most` of them."""
    step = 1 << max(0, math.ceil(math.log2(max(1.0, (high - low + 1) / most))))
    first = math.ceil(low / step) * step
    return list(range(first, math.ceil(high / step) * step + 1, step))


def row_remedy(site: Site, varying: list[VaryingDim], is_batch: bool) -> str:
    """The Remedy column of one dynamic site."""
    marks = _marks(site, varying, is_batch)
    parts = [f"{name}: {advice.varying_shapes}" for name, advice in _advice() if advice.varying_shapes]
    if marks:
        parts.append("torch.compile: " + "; ".join(marks))
    if is_batch:
        bucket = _bucket_call(site, varying)
        if bucket:
            parts.append(f"data: collate_fn={bucket}")
        if any(dim.dim == 0 for dim in varying):
            parts.append("data: DataLoader(..., drop_last=True)")
    return " | ".join(parts)


def advice(dynamic: list[Site], batch: Site | None) -> list[str]:
    """The summary's lines of advice, one per target."""
    lines = [f"  {name:<15}{advice.varying_shapes}   ({advice.varying_shapes_effect})"
             for name, advice in _advice() if advice.varying_shapes]
    batch_dims = varying_dims(batch) if batch is not None and batch.dynamic else []
    if batch_dims:
        marks = _marks(batch, batch_dims, True)
        lines.append(f"  torch.compile  {'; '.join(marks)}   (on each batch, before the compiled call)")
        shapes = len(batch.signatures)
        bucket = _bucket_call(batch, batch_dims)
        if bucket:
            lines.append(f"  data           DataLoader(..., collate_fn={bucket})   "
                         f"({shapes} batch shapes -> at most {_bucket_count(batch_dims)} per varying dim)")
        if any(dim.dim == 0 for dim in batch_dims):
            lines.append("  data           DataLoader(..., drop_last=True)   "
                         "(the batch size varies: a last, smaller batch)")
    else:
        lines.append("  torch.compile  torch._dynamo.mark_dynamic(t, dim) on the tensors feeding the sites above, "
                     "for the dims listed in the report's Varying Dims")
        lines.append(f"  data           pad the varying dims to a few sizes ({BUCKETS} does it in a DataLoader)")
    return lines


def fixed_shapes() -> str:
    """What the summary adds when no shape varies: what the targets advise then ("" when none says)."""
    said = "; ".join(advice.fixed_shapes for _, advice in _advice() if advice.fixed_shapes)
    return f" (fixed shapes: {said})" if said else ""


def _advice() -> list:
    """(name, Advice) of each target, in the order targets are listed."""
    from torchport import targets  # (only when a report is made: the detector's import stays light)

    return [(name, target.advice) for name, target in targets.all_targets().items()]


def _marks(site: Site, varying: list[VaryingDim], is_batch: bool) -> list[str]:
    seen, marks = set(), []
    for dim in varying:
        if is_batch and dim.side == OUT and dim.position < len(site.paths):
            tensor = site.paths[dim.position]
        elif is_batch or dim.side == OUT:  # what a call returns is not marked: what feeds it is
            continue
        else:
            tensor = f"<input {dim.position}>"
        if (tensor, dim.dim) not in seen:
            seen.add((tensor, dim.dim))
            marks.append(f"torch._dynamo.mark_dynamic({tensor}, {dim.dim})")
    return marks


def _bucket_call(site: Site, varying: list[VaryingDim]) -> str | None:
    """pad_to_buckets(...) for a batch: the varying dims of the samples (the batch dim 0 dropped)."""
    sample_dims = sorted({dim.dim - 1 for dim in varying if dim.side == OUT and dim.dim > 0})
    if not sample_dims:
        return None
    low = min(dim.low for dim in varying if dim.dim > 0)
    high = max(dim.high for dim in varying if dim.dim > 0)
    dims = sample_dims[0] if len(sample_dims) == 1 else tuple(sample_dims)
    return f"{BUCKETS}({suggest_buckets(low, high)}, dims={dims})"


def _bucket_count(varying: list[VaryingDim]) -> int:
    widths = [dim for dim in varying if dim.dim > 0]
    return len(suggest_buckets(min(d.low for d in widths), max(d.high for d in widths))) if widths else 1
