"""Where each parameter lives in the flat buffers: segments, buckets, and the per-step check that
every parameter and gradient is still there.

A :class:`Bucket` holds the flat buffers of one (device, dtype); a :class:`Segment` is one
parameter's place in it. :func:`stale_links` and :func:`relink` are the per-step check and repair
(see :mod:`torchport.optim.flat` for the semantics they keep).
"""

from __future__ import annotations

import torch

from .checks import check_grad

# Segment offsets are rounded up to this many elements (64 bytes in fp32), so every parameter view
# starts on an aligned address the way a fresh allocation would.
ALIGN = 16


class Segment:
    """Where one parameter lives inside its bucket."""

    __slots__ = ("param", "group", "offset", "numel", "shape", "stride", "grad_view", "ptr",
                 "dirty", "initialized", "skipped")

    def __init__(self, param: torch.Tensor, group: int, offset: int):
        self.param = param
        self.group = group
        self.offset = offset
        self.numel = param.numel()
        self.shape = tuple(param.shape)
        self.stride = dense_stride(param)
        self.grad_view: torch.Tensor | None = None
        self.ptr = 0
        # the grad view may hold non-zero values (it is, or was since the last zeroing, p.grad);
        # a segment whose p.grad is None must read as zeros for whole-buffer norms
        self.dirty = False
        self.initialized = False  # optimizer.state[p] exists
        self.skipped = 0  # group steps this parameter took no part in


class Bucket:
    """Flat buffers of one (device, dtype)."""

    def __init__(self, device: torch.device, dtype: torch.dtype, segments: list[Segment]):
        self.device = device
        self.dtype = dtype
        self.segments = segments
        last = segments[-1]
        self.numel = align(last.offset + last.numel)
        self.params = torch.zeros(self.numel, device=device, dtype=dtype)
        self.grads = torch.zeros(self.numel, device=device, dtype=dtype)
        self.states: dict[str, torch.Tensor] = {}
        self.temporaries: dict[str, torch.Tensor] = {}
        self.group_ranges: dict[int, tuple[int, int]] = {}
        for i, seg in enumerate(segments):
            lo, _ = self.group_ranges.get(seg.group, (i, i))
            self.group_ranges[seg.group] = (lo, i + 1)
        self.inactive: list[Segment] = []
        # (segment, param, grad view, data_ptr), for the per-step check that nothing moved
        self.links: list[tuple] = []

    def view(self, flat: torch.Tensor, seg: Segment) -> torch.Tensor:
        return flat.as_strided(seg.shape, seg.stride, flat.storage_offset() + seg.offset)

    def temporary(self, key: str, numel: int) -> torch.Tensor:
        """A buffer of `numel` elements for intermediate results, one per key, kept (and grown
        when needed) until the bucket is rebuilt; its content is garbage."""
        buf = self.temporaries.get(key)
        if buf is None or buf.numel() < numel:
            buf = self.temporaries[key] = torch.empty(numel, dtype=self.dtype, device=self.device)
        return buf[:numel]


def stale_links(bucket: Bucket) -> list[tuple[Segment, torch.Tensor | None]]:
    """``(segment, p.grad)`` for each parameter that moved or whose ``p.grad`` is not the
    engine's view."""
    return [(seg, g) for seg, p, view, ptr in bucket.links
            if (g := p.grad) is not view or p.data_ptr() != ptr]


def relink(stale: list[tuple[Segment, torch.Tensor | None]]) -> list[Segment]:
    """Copies fresh gradients into the buffer and points ``p.grad`` back at the views (nothing
    has moved). Returns the segments whose ``p.grad`` is None, their views zeroed.

    After ``zero_grad(set_to_none=True)`` every gradient is fresh, every step: hence one foreach
    copy and whole-list checks rather than per-parameter calls."""
    inactive = [seg for seg, g in stale if g is None]
    for seg in inactive:
        if seg.dirty:
            seg.grad_view.zero_()
            seg.dirty = False
    fresh = [(seg, g) for seg, g in stale if g is not None]
    if fresh:
        grads = [g for _, g in fresh]
        if set(map(type, grads)) != {torch.Tensor} or {g.layout for g in grads} != {torch.strided}:
            for g in grads:
                check_grad(g)
        torch._foreach_copy_([seg.grad_view for seg, _ in fresh], grads)
        for seg, _ in fresh:
            seg.param.grad = seg.grad_view
            seg.dirty = True
    return inactive


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def layout_key(p: torch.Tensor):
    """Same-shape parameters side by side, so per-parameter reductions batch into blocks."""
    return (p.numel(), tuple(p.shape), dense_stride(p))


def dense_stride(p: torch.Tensor) -> tuple:
    """The parameter's own strides if they describe a dense layout (contiguous, channels_last,
    any permutation), else contiguous strides."""
    order = sorted(range(p.dim()), key=lambda d: (p.stride(d), p.shape[d]))
    expected = 1
    dense = True
    for d in order:
        if p.shape[d] != 1 and p.stride(d) != expected:
            dense = False
            break
        expected *= p.shape[d]
    if dense:
        return tuple(p.stride())
    out, acc = [], 1
    for size in reversed(p.shape):
        out.append(acc)
        acc *= size
    return tuple(reversed(out))
