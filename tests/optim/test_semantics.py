"""torch.optim semantics kept by the flat buffers: grads set to None or replaced, frozen
parameters, parameter groups, GradScaler, bf16, channels_last, moved parameters."""

from __future__ import annotations

import copy
import io

import pytest
import torch
from torch import nn

from _optim_cases import DEFAULTS, build, cases
from _optim_harness import (assert_models_match, assert_moved, batches, loss_of, make_model, train)

import torchport.optim as fo
import torchport.optim.flat as flat


def _storage(t):
    return t.untyped_storage().data_ptr()


def test_params_and_grads_are_views_of_one_buffer():
    model = make_model()
    opt = fo.FusedAdam(model.parameters())
    loss_of(model, batches(1)[0]).backward()
    opt.step()
    params = list(model.parameters())
    assert len({_storage(p) for p in params}) == 1
    assert len({_storage(p.grad) for p in params}) == 1
    assert len({_storage(s["exp_avg"]) for s in opt.state.values()}) == 1


def test_one_buffer_per_dtype():
    model = make_model()
    model.head.to(torch.float64)
    opt = fo.FusedSGD(model.parameters(), lr=0.1)
    storages = {(p.dtype, _storage(p)) for p in model.parameters()}
    assert {d for d, _ in storages} == {torch.float32, torch.float64}
    assert len(storages) == 2
    assert len(opt._buckets) == 2


@pytest.mark.parametrize("cls", [fo.FusedAdadelta, fo.FusedRMSprop, fo.FusedRMSpropTF])
def test_chunk_temporaries_are_allocated_once(monkeypatch, cls):
    """Intermediate results go to chunk-long buffers kept between steps, not to fresh
    allocations per chunk (one of megabytes may be an mmap and a page fault per 4 KiB)."""
    sizes, _ = _temporaries_kept_over_steps(monkeypatch, cls, chunk=64)
    assert sizes and all(numel == 64 * cls._chunk_factor for numel in sizes)


@pytest.mark.parametrize("cls", [fo.FusedLamb, fo.NpuFusedLamb, fo.FusedAdamP])
def test_piece_temporaries_are_piece_sized_and_kept(monkeypatch, cls):
    """A piece's update direction (and LAMB's clipped gradient) lives in one buffer as long as
    the largest piece, reused piece after piece, not in a buffer as large as the model."""
    sizes, model = _temporaries_kept_over_steps(monkeypatch, cls, chunk=200)
    largest_piece = max(200, max(p.numel() for p in model.parameters()))
    bucket_numel = sum(p.numel() for p in model.parameters())
    assert sizes and all(numel <= largest_piece < bucket_numel for numel in sizes)


def _temporaries_kept_over_steps(monkeypatch, cls, chunk: int):
    """Sizes of the bucket's temporaries after a step, checked to be the same buffers two steps
    later; and the model."""
    monkeypatch.setattr(flat, "CPU_CHUNK", chunk)
    model = make_model()
    opt = cls(model.parameters(), lr=1e-3, weight_decay=0.1)
    data = batches(3)
    train(model, opt, data[:1])
    (bucket,) = opt._buckets
    kept = {name: (t.data_ptr(), t.numel()) for name, t in bucket.temporaries.items()}
    train(model, opt, data[1:])
    assert {name: (t.data_ptr(), t.numel()) for name, t in bucket.temporaries.items()} == kept
    return [numel for _, numel in kept.values()], model


@cases(DEFAULTS)
def test_set_to_none_relinks_fresh_grads(request, case):
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)
    data = batches(12)
    train(fused_model, fused, data, set_to_none=True)
    train(ref_model, ref, data, set_to_none=True)
    assert_models_match(fused_model, ref_model)
    fused.zero_grad()
    assert all(p.grad is None for p in fused_model.parameters())


@cases(DEFAULTS)
def test_none_grads_are_skipped_like_torch(request, case):
    """Parameters without a gradient are not updated and get no state; when they get gradients
    later they start from their own step 1 (per-parameter bias correction)."""
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)

    def freeze_some(i, model):
        if i < 8:
            model.fc.weight.grad = None
        if i % 3 == 0:
            model.head.bias.grad = None
            model.scale.grad = None

    data = batches(20)
    train(fused_model, fused, data, set_to_none=True, before_step=freeze_some)
    train(ref_model, ref, data, set_to_none=True, before_step=freeze_some)
    assert_models_match(fused_model, ref_model)
    assert_moved(fused_model, make_model())


@cases([DEFAULTS[1]])
def test_never_stepped_params_have_no_state_and_stay_put(request, case):
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)
    before = fused_model.fc.weight.detach().clone()

    def drop(i, model):
        model.fc.weight.grad = None

    train(fused_model, fused, batches(5), set_to_none=False, before_step=drop)
    train(ref_model, ref, batches(5), set_to_none=False, before_step=drop)
    assert fused_model.fc.weight not in fused.state
    assert ref_model.fc.weight not in ref.state
    assert torch.equal(fused_model.fc.weight, before)
    assert_models_match(fused_model, ref_model)


@cases(DEFAULTS)
def test_reassigned_grads_are_copied_in(request, case):
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)

    def replace(i, model):
        model.fc.weight.grad = model.fc.weight.grad * 0.5 + 0.01
        model.conv.bias.grad = torch.full_like(model.conv.bias, 0.1 * i)

    data = batches(10)
    train(fused_model, fused, data, before_step=replace)
    train(ref_model, ref, data, before_step=replace)
    assert_models_match(fused_model, ref_model)
    grad_storage = _storage(fused_model.head.weight.grad)
    assert _storage(fused_model.fc.weight.grad) == grad_storage  # re-linked into the buffer


def test_reassigned_grad_object_is_left_untouched():
    model = make_model()
    opt = fo.FusedSGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_of(model, batches(1)[0]).backward()
    mine = torch.ones_like(model.fc.weight)
    model.fc.weight.grad = mine
    opt.step()
    assert torch.equal(mine, torch.ones_like(mine))
    assert model.fc.weight.grad is not mine
    assert torch.equal(model.fc.weight.grad, mine)


@cases(DEFAULTS)
def test_add_param_group(request, case):
    cls, source, name, options = case
    fused_model, ref_model = make_model(), make_model()
    split = lambda m: ([p for n, p in m.named_parameters() if not n.startswith("head")],
                       list(m.head.parameters()))
    fused_main, fused_late = split(fused_model)
    ref_main, ref_late = split(ref_model)
    fused, ref = build(request, case, type("M", (), {"parameters": lambda self: fused_main})(),
                       type("M", (), {"parameters": lambda self: ref_main})())
    data = batches(14)
    train(fused_model, fused, data[:5])
    train(ref_model, ref, data[:5])
    lr = options["lr"] / 2
    fused.add_param_group({"params": fused_late, "lr": lr})
    ref.add_param_group({"params": ref_late, "lr": lr})
    train(fused_model, fused, data[5:])
    train(ref_model, ref, data[5:])
    assert_models_match(fused_model, ref_model)


def test_param_groups_with_different_hyperparameters_and_scheduler():
    fused_model, ref_model = make_model(), make_model()

    def groups(m):
        return [{"params": list(m.conv.parameters()) + list(m.conv2.parameters()), "lr": 0.02},
                {"params": list(m.norm.parameters()) + list(m.fc.parameters()), "weight_decay": 0.1},
                {"params": list(m.head.parameters()) + [m.scale], "betas": (0.5, 0.9)}]

    fused = fo.FusedAdam(groups(fused_model), lr=1e-2)
    ref = torch.optim.Adam(groups(ref_model), lr=1e-2)
    sched = [torch.optim.lr_scheduler.StepLR(o, step_size=5, gamma=0.5) for o in (fused, ref)]
    for batch in batches(20):
        for model, opt, s in ((fused_model, fused, sched[0]), (ref_model, ref, sched[1])):
            opt.zero_grad()
            loss_of(model, batch).backward()
            opt.step()
            s.step()
    assert_models_match(fused_model, ref_model)


@cases(DEFAULTS)
def test_grad_scaler(request, case):
    """GradScaler's unscale_ and inf check work on the flat gradients: a step with an inf
    gradient is skipped, the scale backs off, and training matches the reference."""
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)
    scalers = [torch.amp.GradScaler("cpu", init_scale=2.0 ** 10) for _ in range(2)]
    for i, batch in enumerate(batches(10)):
        for model, opt, scaler in ((fused_model, fused, scalers[0]), (ref_model, ref, scalers[1])):
            opt.zero_grad()
            scaler.scale(loss_of(model, batch)).backward()
            if i == 4:
                model.fc.weight.grad[0, 0] = float("inf")
                before = [p.detach().clone() for p in model.parameters()]
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            if i == 4:
                assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert scalers[0].get_scale() == scalers[1].get_scale() < 2.0 ** 10
    assert_models_match(fused_model, ref_model)


def _synthetic_steps(model, opt, steps, dtype, seed=3):
    """Steps with gradients that do not depend on the parameters, so rounding differences stay
    rounding differences instead of feeding back through the loss."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=gen).to(dtype)
        opt.step()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@cases(DEFAULTS)
def test_low_precision(request, case, dtype):
    """bf16 / fp16 parameters stay in their dtype and follow the reference run in that dtype to
    within a few units of its precision (Adam-type kernels compute in fp32 internally, as torch's
    fused=True does; the others run the reference's ops in the same dtype)."""
    cls, source, name, options = case
    if dtype == torch.float16 and name != "SGD":  # eps=1e-8 underflows in fp16, in references too
        options = {**options, ("e" if name == "BertAdam" else "eps"): 1e-3}
    # torch's half-precision Adam semantics are its fused kernel's (fp32 math inside)
    ref_only = {"fused": True} if name in ("Adam", "AdamW") else {}
    case = (cls, source, name, options)
    fused_model, ref_model = make_model(dtype=dtype), make_model(dtype=dtype)
    fused, ref = build(request, case, fused_model, ref_model, **ref_only)
    _synthetic_steps(fused_model, fused, 10, dtype)
    _synthetic_steps(ref_model, ref, 10, dtype)
    assert all(p.dtype == dtype and p.grad.dtype == dtype for p in fused_model.parameters())
    assert_models_match(fused_model, ref_model, rtol=4 * torch.finfo(dtype).eps)
    assert_moved(fused_model, make_model(dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_adam_equals_torch_fused(dtype):
    fused_model, ref_model = make_model(dtype=dtype), make_model(dtype=dtype)
    fused = fo.FusedAdam(fused_model.parameters(), lr=1e-2, weight_decay=0.1)
    ref = torch.optim.Adam(ref_model.parameters(), lr=1e-2, weight_decay=0.1, fused=True)
    _synthetic_steps(fused_model, fused, 10, dtype)
    _synthetic_steps(ref_model, ref, 10, dtype)
    assert_models_match(fused_model, ref_model, rtol=0.0)


@cases(DEFAULTS)
@pytest.mark.parametrize("set_to_none", [False, True], ids=["in-place grads", "fresh grads"])
def test_channels_last_is_kept(request, case, set_to_none):
    """Fresh grads are copied into channels_last views, whatever their own strides."""
    fused_model = make_model(channels_last=True)
    ref_model = make_model(channels_last=True)
    fused, ref = build(request, case, fused_model, ref_model)
    cl = torch.channels_last
    assert fused_model.conv.weight.is_contiguous(memory_format=cl)
    assert not fused_model.conv.weight.is_contiguous()

    def contiguous_grad(i, model):
        if set_to_none and i % 2:
            model.conv.weight.grad = model.conv.weight.grad.contiguous()

    data = batches(10)
    train(fused_model, fused, data, set_to_none=set_to_none, before_step=contiguous_grad)
    train(ref_model, ref, data, set_to_none=set_to_none, before_step=contiguous_grad)
    assert fused_model.conv.weight.is_contiguous(memory_format=cl)
    assert fused_model.conv.weight.grad.is_contiguous(memory_format=cl)
    assert_models_match(fused_model, ref_model)


@pytest.mark.parametrize("set_to_none", [False, True])
def test_model_moved_after_construction_is_relaid(set_to_none):
    """model.double() gives the parameters new storage: the next step notices and rebuilds
    (with set_to_none=True, zero_grad leaves that to the step)."""
    fused_model, ref_model = make_model(), make_model()
    fused = fo.FusedAdam(fused_model.parameters(), lr=1e-2)
    ref = torch.optim.Adam(ref_model.parameters(), lr=1e-2)
    data = batches(10)
    train(fused_model, fused, data[:5])
    train(ref_model, ref, data[:5])
    fused_model.double()
    ref_model.double()
    for opt in (fused, ref):  # torch keeps fp32 state for fp64 params; keep the runs alike
        for state in opt.state.values():
            for k, v in state.items():
                if k != "step":
                    state[k] = v.double() if opt is ref else v
    data64 = [(x.double(), y.double()) for x, y in data[5:]]
    train(fused_model, fused, data64, set_to_none=set_to_none)
    train(ref_model, ref, data64, set_to_none=set_to_none)
    assert all(p.dtype == torch.float64 for p in fused_model.parameters())
    assert len({_storage(p) for p in fused_model.parameters()}) == 1
    assert_models_match(fused_model, ref_model)


def test_param_given_new_data_before_step_is_relaid():
    """``p.data = t`` between backward and step swaps the storage but leaves ``p.grad`` our
    view: the step still notices and updates ``t``, as torch.optim does."""
    fused_model, ref_model = make_model(), make_model()
    fused = fo.FusedSGD(fused_model.parameters(), lr=0.1, momentum=0.9)
    ref = torch.optim.SGD(ref_model.parameters(), lr=0.1, momentum=0.9)
    fresh = torch.linspace(-1, 1, fused_model.fc.weight.numel()).view_as(fused_model.fc.weight)

    def replace_data(i, model):
        if i == 3:
            model.fc.weight.data = fresh.clone()

    data = batches(6)
    train(fused_model, fused, data, before_step=replace_data)
    train(ref_model, ref, data, before_step=replace_data)
    assert len({_storage(p) for p in fused_model.parameters()}) == 1
    assert_models_match(fused_model, ref_model)


@cases(DEFAULTS)
@pytest.mark.parametrize("how", ["deepcopy", "torch.save"])
def test_a_copied_optimizer_continues_like_the_original(request, case, how):
    """copy.deepcopy / pickling of (model, optimizer) mid-training: the copy gets buffers of its
    own and trains on exactly like the original."""
    fused_model = make_model()
    fused, _ = build(request, case, fused_model, make_model())
    data = batches(8)
    train(fused_model, fused, data[:4])
    if how == "deepcopy":
        model_copy, opt_copy = copy.deepcopy((fused_model, fused))
    else:
        buffer = io.BytesIO()
        torch.save((fused_model, fused), buffer)
        buffer.seek(0)
        model_copy, opt_copy = torch.load(buffer, weights_only=False)
    train(fused_model, fused, data[4:])
    train(model_copy, opt_copy, data[4:])
    assert _storage(next(model_copy.parameters())) != _storage(next(fused_model.parameters()))
    assert len({_storage(p) for p in model_copy.parameters()}) == 1
    assert_models_match(model_copy, fused_model, rtol=0)


def test_clip_grad_norm_fused_matches_torch():
    fused_model, ref_model = make_model(), make_model()
    fused = fo.FusedSGD(fused_model.parameters(), lr=0.1)
    batch = batches(1)[0]
    for model in (fused_model, ref_model):
        loss_of(model, batch).backward()
    fused_model.head.bias.grad = None
    ref_model.head.bias.grad = None
    for norm_type in (2.0, float("inf"), 1.0, 0.5):
        total = fused.clip_grad_norm_fused_(0.05, norm_type=norm_type)
        expected = torch.nn.utils.clip_grad_norm_(ref_model.parameters(), 0.05, norm_type=norm_type)
        # the 1/p-th root of a p < 1 norm magnifies the summation order's rounding
        assert torch.allclose(total, expected, rtol=1e-6 if norm_type >= 1 else 1e-5)
        if norm_type == 2.0:
            assert total > 0.1  # the clip really scaled the gradients down
        for a, b in zip(fused_model.parameters(), ref_model.parameters()):
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("norm_type", [0.0, -1.0, float("-inf"), float("nan")])
def test_clip_grad_norm_fused_refuses_norms_that_are_not_a_norm_of_norms(norm_type):
    model = make_model()
    opt = fo.FusedSGD(model.parameters(), lr=0.1)
    loss_of(model, batches(1)[0]).backward()
    before = [p.grad.clone() for p in model.parameters()]
    with pytest.raises(ValueError, match="norm_type > 0"):
        opt.clip_grad_norm_fused_(0.01, norm_type=norm_type)
    assert all(torch.equal(a, p.grad) for a, p in zip(before, model.parameters()))


def test_clip_grad_norm_fused_ignores_stale_grads_of_params_set_to_none():
    model = make_model()
    opt = fo.FusedSGD(model.parameters(), lr=0.1)
    loss_of(model, batches(1)[0]).backward()
    full = opt.clip_grad_norm_fused_(1e9)
    model.fc.weight.grad = None
    partial = opt.clip_grad_norm_fused_(1e9)
    rest = torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
    assert partial < full
    assert torch.allclose(partial, rest, rtol=1e-6)


def test_adamp_projection_on_a_transposed_parameter(timm_optim):
    """A parameter whose dim 0 is not outermost in memory takes AdamP's logical-order path."""
    def params(seed):
        torch.manual_seed(seed)
        return [nn.Parameter(torch.randn(5, 7).t()), nn.Parameter(torch.randn(3, 4, 2)),
                nn.Parameter(torch.randn(7, 5).t())]

    mine, theirs = params(0), params(0)
    assert mine[0].stride() == (1, 7)
    fused = fo.FusedAdamP(mine, lr=1e-2, weight_decay=0.1, delta=10.0)
    ref = timm_optim.AdamP(theirs, lr=1e-2, weight_decay=0.1, delta=10.0)
    gen = torch.Generator().manual_seed(5)
    for _ in range(10):
        for a, b in zip(mine, theirs):
            a.grad = torch.randn(a.shape, generator=gen)
            b.grad = a.grad.clone()
        fused.step()
        ref.step()
    for a, b in zip(mine, theirs):
        assert ((a - b).abs().max() / b.abs().max()).item() <= 1e-6
    assert mine[0].stride() == (1, 7)
