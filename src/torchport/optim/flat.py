"""The flat-buffer engine every fused optimizer shares.

For each (device, dtype) the engine owns one flat buffer of parameters, one of gradients and one
per state key (``exp_avg``, ``momentum_buffer``, ...). Each parameter's ``.data`` and ``.grad`` are
strided views into those buffers (their own strides are kept, so channels_last stays
channels_last), and ``optimizer.state[p]`` holds views into the state buffers. An optimizer's math
then runs once over a contiguous *run* of parameters instead of once per parameter.

What keeps torch.optim semantics:

* Every ``step()`` first checks, per parameter, that ``p.grad`` is still the engine's view. A grad
  set to ``None`` is skipped exactly like torch.optim skips it (no state, no step counted); a grad
  replaced by a new tensor (``zero_grad(set_to_none=True)`` followed by ``backward()``, user code,
  a library) is copied into the buffer and re-linked. A parameter whose storage moved
  (``model.double()``, ``load_state_dict(assign=True)``) triggers a rebuild of the buffers.
* There is one step counter per parameter group. Each parameter only records how many group steps
  it skipped, so ``step(p) = group_count - skipped(p)``; while nothing is skipped the counter is all
  the bookkeeping there is. ``state_dict()`` expands it into torch.optim's per-parameter ``step``.
* Runs are maximal sequences of parameters of one group and one bucket that have a gradient and
  the same step, so skipped parameters and parameters at different steps are never mixed.

What does not carry over: a parameter that is a view of a larger tensor (a slice of a fused
weight, say) is copied into the flat buffer and stops sharing memory with that tensor, as after
``p.data = p.data.clone()``. Keep such parameters with a torch.optim optimizer.

Subclasses declare their state (``_state_spec``), how ``step`` appears in a checkpoint
(``_step_format``) and the math for one run (``_update``).
"""

from __future__ import annotations

from typing import Callable, Iterator

import torch

from .buckets import Bucket, Segment, align, layout_key, relink, stale_links
from .checks import check_grad, check_param, check_state_shapes
from .closure import closure_loss
from .segments import Block, blocks_of

# Elementwise math on CPU walks the flat buffer in pieces this long: streaming a 100 MB buffer once
# per op through DRAM is slower than torch's per-parameter loop; pieces keep the op chain in cache.
CPU_CHUNK = 1 << 18
# Devices whose torch build has the ``torch._fused_*`` optimizer kernels.
FUSED_KERNEL_DEVICES = {"cpu", "cuda", "mps", "xpu"}


class Run:
    """A contiguous range of one bucket's segments, all in one group, with grads and one step."""

    def __init__(self, opt: "FlatOptimizer", bucket: Bucket, group: int, lo: int, hi: int, step: int):
        self.opt = opt
        self.bucket = bucket
        self.group_index = group
        self.lo, self.hi = lo, hi
        self.step = step  # this run's per-parameter step, after the increment
        segs = bucket.segments
        self.start = segs[lo].offset
        self.end = segs[hi - 1].offset + segs[hi - 1].numel
        self._blocks: list[Block] | None = None
        self._pieces: list[Run] | None = None
        self._chunk_views: dict[tuple, list[dict]] = {}

    @property
    def group(self) -> dict:
        return self.opt.param_groups[self.group_index]

    @property
    def group_step(self) -> int:
        return self.opt._group_steps[self.group_index]

    @property
    def segments(self) -> list[Segment]:
        return self.bucket.segments[self.lo:self.hi]

    @property
    def numel(self) -> int:
        return self.end - self.start

    @property
    def params(self) -> torch.Tensor:
        return self.bucket.params[self.start:self.end]

    @property
    def grads(self) -> torch.Tensor:
        return self.bucket.grads[self.start:self.end]

    def state(self, key: str) -> torch.Tensor:
        return self.bucket.states[key][self.start:self.end]

    def temporary(self, name: str) -> torch.Tensor:
        """A buffer as long as this run, for results needed only while it is processed (a piece's
        update direction, say). One per name, reused by run after run: a cache-sized piece
        finds it in cache, where memory of its own at each offset of the bucket would cost a
        write-back to DRAM. Its content is garbage on entry."""
        return self.bucket.temporary(name, self.numel)

    def temporaries(self, count: int) -> list[torch.Tensor]:
        """`count` buffers the length of one chunk, for intermediate results (take
        ``buffer[:length of the chunk]``, as :meth:`chunk_views` does). Reused chunk after
        chunk, they stay in cache. On CPU they are also kept between steps: a fresh allocation of
        megabytes can be served by mmap and then costs a page fault per 4 KiB, every chunk of
        every step."""
        if self.bucket.device.type != "cpu":
            return [torch.empty(self.numel, dtype=self.bucket.dtype, device=self.bucket.device)
                    for _ in range(count)]
        n = min(self.numel, self.opt.cpu_chunk())
        return [self.bucket.temporary(f"chunk {i}", n) for i in range(count)]

    def chunks(self) -> Iterator[slice]:
        """Slices (relative to this run) for elementwise math: cache-sized pieces on CPU."""
        n = self.numel
        step = self.opt.cpu_chunk() if self.bucket.device.type == "cpu" else n
        for a in range(0, n, max(step, 1)):
            yield slice(a, min(a + step, n))

    def chunk_views(self, *states: str, temporaries: int = 0) -> list[dict]:
        """Per chunk (see :meth:`chunks`), ``{"params": ..., "grads": ..., <each state>: ...,
        "temporaries": [...]}``: views of the chunk, and `temporaries` buffers of its length
        (see :meth:`temporaries`) for ``out=`` arguments. On CPU the views are made once and kept
        with the run, which the optimizer keeps from step to step while no parameter skips one
        (ResNet-50 shapes: 0.3 ms of slicing a step saved for RMSprop, 2 ms for BertAdam, whose
        runs are cut into many pieces)."""
        key = (states, temporaries)
        views = self._chunk_views.get(key)
        if views is None:
            flats = {"params": self.params, "grads": self.grads}
            flats.update((name, self.state(name)) for name in states)
            buffers = self.temporaries(temporaries)
            views = []
            for c in self.chunks():
                chunk = {name: flat[c] for name, flat in flats.items()}
                chunk["temporaries"] = [b[:c.stop - c.start] for b in buffers]
                views.append(chunk)
            if self.bucket.device.type == "cpu":
                self._chunk_views[key] = views
        return views

    def pieces(self) -> list["Run"]:
        """This run cut at parameter boundaries into cache-sized sub-runs (on CPU; one piece
        elsewhere), for math that needs whole parameters (per-parameter norms) and should still
        find its data in cache. A parameter larger than the chunk size is a piece of its own."""
        if self.bucket.device.type != "cpu":
            return [self]
        if self._pieces is None:
            pieces, first, size = [], self.lo, 0
            segs = self.bucket.segments
            for i in range(self.lo, self.hi):
                if i > first and size + segs[i].numel > self.opt.cpu_chunk():
                    pieces.append(Run(self.opt, self.bucket, self.group_index, first, i, self.step))
                    first, size = i, 0
                size += segs[i].numel
            pieces.append(Run(self.opt, self.bucket, self.group_index, first, self.hi, self.step))
            self._pieces = pieces
        for piece in self._pieces:
            piece.step = self.step
        return self._pieces

    @property
    def blocks(self) -> list[Block]:
        """Consecutive same-shape segments, for per-parameter reductions."""
        if self._blocks is None:
            self._blocks = blocks_of(self.segments, self.start)
        return self._blocks

    def step_tensor(self) -> torch.Tensor:
        return torch.tensor(float(self.step), dtype=torch.float32, device=self.bucket.device)

    def fused_kernels(self) -> bool:
        return self.bucket.device.type in FUSED_KERNEL_DEVICES


class FlatOptimizer(torch.optim.Optimizer):
    """Base class: torch.optim.Optimizer whose tensors live in flat per-(device, dtype) buffers.

    Subclasses provide:

    * ``_state_spec(group)``: ``{key: initial value}`` of the per-parameter state, in the order
      torch's reference creates it;
    * ``_step_format``: ``"tensor"`` (0-dim float32 CPU tensor, torch.optim), ``"int"`` (a Python
      int), ``"group"`` (one ``step`` per param group, as timm's LAMB) or ``None`` (no step: SGD);
    * ``_update(run)``: the math for one :class:`Run`.
    """

    _step_format: str | None = "tensor"
    # CPU_CHUNK times this is the chunk length on CPU (see Run.chunks). A chain of ops bound by
    # arithmetic rather than memory gains from fewer, longer chunks: fewer parallel regions.
    _chunk_factor = 1

    def __init__(self, params, defaults: dict):
        self._layout_ready = False
        self._group_steps: list[int] = []
        super().__init__(params, defaults)
        self._build()

    def __getstate__(self) -> dict:
        """What pickling and ``copy.deepcopy`` keep: torch.optim's defaults, param groups and
        per-parameter state, with the steps written out (:meth:`state_dict`'s layout, keyed by
        parameter); the flat buffers are laid out again on the other side."""
        state = super().__getstate__()
        if self._layout_ready:
            self._link()
            state["state"] = self._reference_state()
            state["param_groups"] = self._with_group_steps([dict(g) for g in self.param_groups])
        return state

    def __setstate__(self, state: dict) -> None:
        """Lays the buffers out again around state in torch.optim's layout. torch's
        ``load_state_dict`` ends here too, so a checkpoint of this class or of its reference
        (torch.optim, timm, BERT) loads through the same path.

        State tensors of the wrong shape are refused before anything changes: torch has checked
        the number and sizes of the groups by then, so a failed load leaves the optimizer as
        it was."""
        check_state_shapes(state["state"], state["param_groups"], self._state_spec)
        super().__setstate__(state)
        self._layout_ready = False
        self._group_steps = [0] * len(self.param_groups)
        loaded = {p: dict(s) for p, s in self.state.items()}
        self.state.clear()
        self._build(loaded_state=loaded)

    def cpu_chunk(self) -> int:
        return CPU_CHUNK * self._chunk_factor

    # --- subclass interface ------------------------------------------------------------------
    def _state_spec(self, group: dict) -> dict[str, float]:
        raise NotImplementedError

    def _update(self, run: Run) -> None:
        raise NotImplementedError

    def _begin_step(self, runs: list[Run]) -> None:
        """Hook before the runs are updated (e.g. LAMB's global gradient norm)."""

    # --- torch.optim.Optimizer API -----------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        params = param_group["params"]
        params = [params] if isinstance(params, torch.Tensor) else list(params)
        for p in params:
            check_param(p)
        if len({id(p) for p in params}) != len(params):
            # torch.optim only warns, and then updates such a parameter twice per step
            raise ValueError("a parameter appears twice in one param group; fused optimizers lay "
                             "each parameter out once in the flat buffer")
        param_group["params"] = params
        super().add_param_group(param_group)
        self._group_steps.append(0)
        if self._layout_ready:
            self._build()

    @torch.no_grad()
    def step(self, closure: Callable | None = None):
        """Performs a single optimization step (see the class docstring for the math)."""
        loss = closure_loss(closure)
        self._link()
        runs = self._plan()
        if runs:
            self._begin_step(runs)
            for run in runs:
                self._update(run)
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Like torch.optim: ``set_to_none=True`` sets every ``.grad`` to None (the next backward
        gets re-linked into the flat buffer at ``step()``); ``False`` zeroes the flat buffers in one
        op per bucket.

        ``False`` is the faster loop here: backward then accumulates into the flat buffer in
        place, while after ``True`` it creates new tensors that ``step()`` must copy in (2000
        parameters of 1000 elements: zero_grad + Adam step 3.8 ms against 7.9 ms)."""
        if not self._layout_ready:
            return super().zero_grad(set_to_none)
        if set_to_none:
            # no memset: a view left without a gradient is zeroed at the next step, on its own
            # (and a moved parameter is noticed there too)
            for seg in self._segments:
                seg.param.grad = None
            return
        stale = self._stale_grads()
        for bucket in self._buckets:
            bucket.grads.zero_()
        for seg, g in (item for items in stale for item in items):
            if g is None:
                seg.dirty = False
            else:  # a tensor someone else put there: zeroed in place, as torch.optim does
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def state_dict(self) -> dict:
        """torch.optim's layout: per-parameter state (with ``step`` where the reference has one)."""
        self._link()
        sd = super().state_dict()
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        sd["state"] = {index[id(p)]: entry for p, entry in self._reference_state().items()}
        self._with_group_steps(sd["param_groups"])
        return sd

    def _reference_state(self) -> dict:
        """``optimizer.state`` as the reference keeps it: ``step`` (where the reference has a
        per-parameter one) before the state tensors."""
        state = {}
        for p, value in self.state.items():
            entry = {}
            if self._step_format in ("tensor", "int"):
                seg = self._seg_of[id(p)]
                step = self._group_steps[seg.group] - seg.skipped
                entry["step"] = (torch.tensor(float(step), dtype=torch.float32)
                                 if self._step_format == "tensor" else step)
            entry.update(value)
            state[p] = entry
        return state

    def _with_group_steps(self, groups: list[dict]) -> list[dict]:
        """Copies of the param groups get ``step`` where the reference keeps it per group."""
        if self._step_format == "group":
            for gi, group in enumerate(groups):
                if self._group_steps[gi] > 0:
                    group["step"] = torch.tensor(float(self._group_steps[gi]), dtype=torch.float32)
        return groups

    @torch.no_grad()
    def clip_grad_norm_fused_(self, max_norm: float, norm_type: float = 2.0,
                              error_if_nonfinite: bool = False) -> torch.Tensor:
        """``torch.nn.utils.clip_grad_norm_`` over every gradient of this optimizer, computed as
        one reduction per flat buffer. Returns the total norm. ``norm_type`` must be positive
        (``inf`` included): only then is the norm of the whole buffer the norm of the
        per-parameter norms that torch takes."""
        max_norm = float(max_norm)
        norm_type = float(norm_type)
        if not norm_type > 0:
            raise ValueError(f"clip_grad_norm_fused_ needs norm_type > 0, got {norm_type}")
        self._link()
        live = [b for b in self._buckets if len(b.inactive) < len(b.segments)]
        if not live:
            return torch.tensor(0.0)
        device = live[0].device
        norms = [torch.linalg.vector_norm(b.grads, norm_type).to(device) for b in live]
        total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
        if error_if_nonfinite and torch.logical_or(total.isnan(), total.isinf()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients is non-finite, so it cannot be "
                "clipped. To disable this error and scale the gradients by the non-finite norm "
                "anyway, set `error_if_nonfinite=False`")
        coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
        for b in live:
            b.grads.mul_(coef.to(b.device))
        return total

    # --- engine --------------------------------------------------------------------------------
    @torch.no_grad()
    def _build(self, loaded_state: dict | None = None) -> None:
        """(Re)lay out every parameter into fresh flat buffers, keeping values, grads and state."""
        old = {id(s.param): s for s in getattr(self, "_segments", [])}
        old_state = loaded_state if loaded_state is not None else {
            p: dict(s) for p, s in self.state.items()}
        by_key: dict[tuple, list[Segment]] = {}
        for gi, group in enumerate(self.param_groups):
            params = sorted(group["params"], key=layout_key)
            for p in params:
                check_param(p)
                seg = Segment(p, gi, 0)
                prev = old.get(id(p))
                if prev is not None and loaded_state is None:
                    seg.skipped = prev.skipped
                    seg.initialized = prev.initialized
                by_key.setdefault((p.device, p.dtype), []).append(seg)
        buckets = []
        for (device, dtype), segs in by_key.items():
            offset = 0
            for seg in segs:
                seg.offset = offset
                offset = align(offset + seg.numel)
            buckets.append(Bucket(device, dtype, segs))
        if loaded_state is not None:
            self._adopt_steps(buckets, loaded_state)
        self.state.clear()
        for bucket in buckets:
            self._fill_bucket(bucket, old_state)
        self._buckets = buckets
        self._segments = [s for b in buckets for s in b.segments]
        self._seg_of = {id(s.param): s for s in self._segments}
        for bucket in buckets:
            bucket.links = [(s, s.param, s.grad_view, s.ptr) for s in bucket.segments]
        self._uniform: dict[tuple[int, int], bool] = {}
        self._run_cache: dict[tuple[int, int], Run] = {}
        self._layout_ready = True

    def _adopt_steps(self, buckets: list[Bucket], loaded: dict) -> None:
        """Turns loaded per-parameter steps into group counters and per-parameter lags."""
        segs = [s for b in buckets for s in b.segments]
        for gi, group in enumerate(self.param_groups):
            mine = [s for s in segs if s.group == gi]
            steps = {}
            for s in mine:
                st = loaded.get(s.param)
                if st:
                    raw = st.get("step", 1)
                    steps[id(s)] = int(raw.item() if torch.is_tensor(raw) else raw)
            group_step = group.pop("step", None)
            if self._step_format == "group":
                count = int(group_step.item() if torch.is_tensor(group_step) else group_step or 0)
            else:
                count = max(steps.values(), default=0)
            self._group_steps[gi] = count
            for s in mine:
                s.initialized = id(s) in steps
                s.skipped = count - steps[id(s)] if s.initialized else count

    def _fill_bucket(self, bucket: Bucket, old_state: dict) -> None:
        for key in self._bucket_state_keys(bucket):
            self._alloc_state(bucket, key)
        # in a loop of their own, the views' objects lie side by side in memory, in the order the
        # per-step check reads them, so the CPU prefetches them: the check on 2000 parameters took
        # 0.85-0.93 ms instead of 1.09-1.2 ms after torch's optimizers had evicted the caches
        for seg in bucket.segments:
            seg.grad_view = bucket.view(bucket.grads, seg)
        for seg in bucket.segments:
            p = seg.param
            group = self.param_groups[seg.group]
            view = bucket.view(bucket.params, seg)
            view.copy_(p.detach())
            g = p.grad
            if g is not None:
                check_grad(g)
                seg.grad_view.copy_(g)
                p.grad = None
            p.data = view
            seg.ptr = p.data_ptr()
            if g is not None:
                p.grad = seg.grad_view
                seg.dirty = True
            if seg.initialized:
                st = old_state.get(p, {})
                live = {}
                for key, init in self._state_spec(group).items():
                    sview = bucket.view(bucket.states[key], seg)
                    if torch.is_tensor(st.get(key)):
                        sview.copy_(st[key])
                    else:
                        sview.fill_(init)
                    live[key] = sview
                self.state[p] = live

    def _bucket_state_keys(self, bucket: Bucket) -> dict[str, float]:
        keys: dict[str, float] = {}
        for gi in bucket.group_ranges:
            keys.update(self._state_spec(self.param_groups[gi]))
        return keys

    def _alloc_state(self, bucket: Bucket, key: str) -> None:
        """One flat buffer per state key, filled with its initial value."""
        init = None
        for gi in bucket.group_ranges:
            spec = self._state_spec(self.param_groups[gi])
            if key in spec:
                init = spec[key]
        bucket.states[key] = torch.full_like(bucket.params, init or 0.0)

    def _stale_grads(self) -> list[list[tuple[Segment, torch.Tensor | None]]]:
        """Per bucket, ``(segment, p.grad)`` of the parameters whose grad is not the engine's
        view, after rebuilding the buffers if a parameter got new storage (``model.double()``,
        ``p.data = t``, ...; module conversions also swap the ``.data`` of our gradient views,
        so nothing may trust ``p.grad is grad_view`` of a moved parameter).

        The common case (nothing moved, every grad still our view) is one pass that reads each
        parameter once: on many small parameters these reads miss the cache and are a large
        part of a step (2000 parameters: 0.9 ms, against 1.1 ms for a pass over storages and
        another over grads)."""
        if not self._layout_ready:
            self._build()
        stale = [stale_links(bucket) for bucket in self._buckets]
        if any(seg.param.data_ptr() != seg.ptr for segs in stale for seg, _ in segs):
            self._build()
            stale = [stale_links(bucket) for bucket in self._buckets]
        return stale

    def _link(self) -> None:
        """Puts every gradient back into the flat buffers and records, per bucket, the
        parameters that have none."""
        for bucket, stale in zip(self._buckets, self._stale_grads()):
            bucket.inactive = relink(stale) if stale else []

    def _plan(self) -> list[Run]:
        """Splits each (bucket, group) into runs, then advances the step counters."""
        runs: list[Run] = []
        for bucket in self._buckets:
            for key in self._bucket_state_keys(bucket):
                if key not in bucket.states:
                    self._alloc_state(bucket, key)
            inactive = {id(s) for s in bucket.inactive}
            for gi, (lo, hi) in bucket.group_ranges.items():
                count = self._group_steps[gi]
                cache_key = (id(bucket), gi)
                if not inactive and self._uniform.get(cache_key):
                    run = self._run_cache.get(cache_key)
                    if run is None:
                        run = self._run_cache[cache_key] = Run(self, bucket, gi, lo, hi, 0)
                    run.step = count + 1 - bucket.segments[lo].skipped
                    runs.append(run)
                    continue
                runs.extend(self._split(bucket, gi, lo, hi, count, inactive))
                skipped = {s.skipped for s in bucket.segments[lo:hi]}
                self._uniform[cache_key] = len(skipped) == 1
        for gi in range(len(self._group_steps)):
            self._group_steps[gi] += 1
        for run in runs:
            if run.step == 1:
                self._init_state(run)
        return runs

    def _split(self, bucket: Bucket, gi: int, lo: int, hi: int, count: int,
               inactive: set) -> list[Run]:
        runs = []
        segs = bucket.segments
        start = None
        for i in range(lo, hi + 1):
            seg = segs[i] if i < hi else None
            if seg is not None and id(seg) in inactive:
                seg.skipped += 1
                seg = None
            if start is not None and (seg is None or seg.skipped != segs[start].skipped):
                runs.append(Run(self, bucket, gi, start, i, count + 1 - segs[start].skipped))
                start = None
            if seg is not None and start is None:
                start = i
        return runs

    def _init_state(self, run: Run) -> None:
        """First step of these parameters: their state views appear in optimizer.state."""
        bucket = run.bucket
        spec = self._state_spec(run.group)
        for seg in run.segments:
            if seg.initialized:
                continue
            seg.initialized = True
            live = {}
            for key, init in spec.items():
                sview = bucket.view(bucket.states[key], seg)
                sview.fill_(init)
                live[key] = sview
            self.state[seg.param] = live


def step_grad(grad: torch.Tensor, param: torch.Tensor, maximize: bool = False,
              weight_decay: float = 0.0, out: torch.Tensor | None = None) -> torch.Tensor:
    """The gradient torch's single-tensor optimizers step with: negated to maximize, plus
    ``weight_decay * param``; written into `out` (a chunk temporary) when it is given."""
    if maximize:
        grad = torch.neg(grad, out=out)
    if weight_decay != 0:
        grad = torch.add(grad, param, alpha=weight_decay, out=out)
    return grad
