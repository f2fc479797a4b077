"""What to do about a dynamic shape, per target and per kind of dim: the report's Remedy column and
the summary's advice.

- Each target with a remedy of its own (its `advice.varying_shapes`), whatever varied: the NPU's
  is one line of configuration that makes torch_npu use binary (precompiled) kernels, not
  compiled again for each new shape.
- torch.compile: `torch._dynamo.mark_dynamic(t, dim)` for each dim found to vary, so that one
  graph with a symbolic size serves them all.
- The data, from what varied in the loader's batch (batchdims.py):
  a length (a sequence, an image side): `torchport.shapes.pad_to_buckets`, a collate function
  that pads it up to a few sizes, so that N shapes become as many as there are buckets;
  a count (YOLO's boxes, concatenated over the batch): pad its rows to a few sizes;
  the batch size, smaller only in the last batch of each pass: `DataLoader(drop_last=True)`;
  the batch size at other steps: batches of one size. drop_last is advised for nothing else.
"""

from __future__ import annotations

import math

from torchport.shapes.batchdims import BATCH_SIZE, COUNT, LENGTH, BatchDim
from torchport.shapes.sites import IN, OUT, Site, VaryingDim

BUCKETS = "torchport.shapes.pad_to_buckets"
DROP_LAST = "DataLoader(..., drop_last=True)"


def suggest_buckets(low: int, high: int, most: int = 4) -> list[int]:
    """A few sizes that cover low..high: multiples of a power of two, about `most` of them."""
    step = 1 << max(0, math.ceil(math.log2(max(1.0, (high - low + 1) / most))))
    first = math.ceil(low / step) * step
    return list(range(first, math.ceil(high / step) * step + 1, step))


def batch_label(dim: BatchDim, name: str) -> str:
    """The Varying Dims entry of a batch tensor: `input 1 (targets) dim 0: 3..41 (a count, not the batch)`."""
    varying = dim.varying
    kind = {BATCH_SIZE: "the batch size, smaller in the last batch" if dim.short_last else "the batch size",
            LENGTH: "a length", COUNT: "a count, not the batch"}.get(dim.kind)
    said = f" ({kind})" if kind else ""
    return f"input {varying.position} ({name}) dim {varying.dim}: {varying.low}..{varying.high}{said}"


def call_remedy(site: Site, varying: list[VaryingDim]) -> str:
    """The Remedy column of a dynamic call site: the targets' remedies and the dims to mark."""
    marks = _unique(f"torch._dynamo.mark_dynamic(<input {dim.position}>, {dim.dim})"
                    for dim in varying if dim.side == IN)  # what a call returns is not marked: what feeds it is
    return " | ".join(_target_remedies() + (["torch.compile: " + "; ".join(marks)] if marks else []))


def batch_remedy(dims: list[BatchDim], names: list[str]) -> str:
    """The Remedy column of the loader's batch."""
    parts = _target_remedies()
    marks = _batch_marks(dims, names)
    if marks:
        parts.append("torch.compile: " + "; ".join(marks))
    parts += [f"data: {remedy}" for remedy, _ in _data_remedies(dims, names)]
    return " | ".join(parts)


def advice(batch_dims: list[BatchDim], names: list[str], made_in_step: list[Site]) -> list[str]:
    """The summary's lines of advice: one per target, then torch.compile's and the data's, and a
    word on the sites whose sizes the step makes itself (`made_in_step`), which no data remedy reaches."""
    lines = [f"  {name:<15}{advice.varying_shapes}   ({advice.varying_shapes_effect})"
             for name, advice in _advice() if advice.varying_shapes]
    if batch_dims:
        lines.append(f"  torch.compile  {'; '.join(_batch_marks(batch_dims, names))}   "
                     f"(on each batch, before the compiled call)")
        lines += [f"  data           {remedy}   ({why})" for remedy, why in _data_remedies(batch_dims, names)]
    else:
        lines.append("  torch.compile  torch._dynamo.mark_dynamic(t, dim) on the tensors feeding the sites above, "
                     "for the dims listed in the report's Varying Dims")
    if made_in_step:
        first = made_in_step[0]
        more = f" and {len(made_in_step) - 1} more" if len(made_in_step) > 1 else ""
        said = "keep one shape" if not batch_dims else "do not have"
        lines.append(f"  in the step    {first.file}:{first.line} {first.function}{more}: sizes the loader's batches "
                     f"{said}, made inside the step (a resize, a filter, nonzero); let that code choose from a few sizes")
    return lines


def fixed_shapes() -> str:
    """What the summary adds when no shape varies: what the targets advise then ("" when none says)."""
    said = "; ".join(advice.fixed_shapes for _, advice in _advice() if advice.fixed_shapes)
    return f" (fixed shapes: {said})" if said else ""


def _target_remedies() -> list[str]:
    return [f"{name}: {advice.varying_shapes}" for name, advice in _advice() if advice.varying_shapes]


def _advice() -> list:
    """(name, Advice) of each target, in the order targets are listed."""
    from torchport import targets  # (only when a report is made: the detector's import stays light)

    return [(name, target.advice) for name, target in targets.all_targets().items()]


def _batch_marks(dims: list[BatchDim], names: list[str]) -> list[str]:
    return _unique(f"torch._dynamo.mark_dynamic({_name(names, dim.varying)}, {dim.varying.dim})" for dim in dims)


def _data_remedies(dims: list[BatchDim], names: list[str]) -> list[tuple[str, str]]:
    """(remedy, why) for the data, one per kind of dim that varied."""
    found = []
    lengths = [dim.varying for dim in dims if dim.kind == LENGTH]
    if lengths:
        found.append((f"DataLoader(..., collate_fn={_bucket_call(lengths)})",
                      f"a length varies: {_sizes(lengths)} -> {len(_buckets(lengths))} sizes"))
    counts = [dim.varying for dim in dims if dim.kind == COUNT]
    if counts:
        tensors = ", ".join(_unique(_name(names, dim) for dim in counts))
        why = "the boxes or targets of full batches vary in number: drop_last would not help"
        found.append((f"pad the rows of {tensors} to a few counts {_buckets(counts)}, the padding rows "
                      "ignored by the loss", why))
    sizes = [dim for dim in dims if dim.kind == BATCH_SIZE]
    if sizes and all(dim.short_last for dim in sizes):
        found.append((DROP_LAST, "the batch size varies in the last batch only: it is dropped"))
    elif sizes:
        found.append(("batches of one size (the sampler's batch_size)",
                      "the batch size varies at other steps than the last: drop_last would not help"))
    return found


def _bucket_call(lengths: list[VaryingDim]) -> str:
    """pad_to_buckets(...) for the lengths of a batch: the sample's dims (the batch dim 0 dropped)."""
    sample_dims = sorted({dim.dim - 1 for dim in lengths})
    dims = sample_dims[0] if len(sample_dims) == 1 else tuple(sample_dims)
    return f"{BUCKETS}({_buckets(lengths)}, dims={dims})"


def _buckets(varying: list[VaryingDim]) -> list[int]:
    return suggest_buckets(min(dim.low for dim in varying), max(dim.high for dim in varying))


def _sizes(varying: list[VaryingDim]) -> str:
    return f"{min(dim.low for dim in varying)}..{max(dim.high for dim in varying)}"


def _name(names: list[str], dim: VaryingDim) -> str:
    return names[dim.position] if dim.side == OUT and dim.position < len(names) else f"<input {dim.position}>"


def _unique(items) -> list[str]:
    return list(dict.fromkeys(items))
