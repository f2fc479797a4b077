"""state_dict() has the reference's layout, and checkpoints move both ways between a fused
optimizer and its reference with training continuing identically."""

from __future__ import annotations

import io

import torch

from _optim_cases import DEFAULTS, build, cases, reference
from _optim_harness import assert_models_match, batches, make_model, train


def _roundtrip(sd):
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


def _layout(sd):
    """Keys, types and shapes of a state_dict, without values."""
    def describe(v):
        if torch.is_tensor(v):
            return ("tensor", tuple(v.shape), v.dtype, v.device.type)
        return type(v).__name__
    state = {i: {k: describe(v) for k, v in s.items()} for i, s in sd["state"].items()}
    groups = [{k: (v if k == "params" else describe(v)) for k, v in g.items()} for g in sd["param_groups"]]
    return state, groups


@cases(DEFAULTS)
def test_state_dict_layout_equals_reference(request, case):
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)

    def drop(i, model):
        model.fc.bias.grad = None  # a parameter without state must be absent in both

    data = batches(4)
    train(fused_model, fused, data, before_step=drop)
    train(ref_model, ref, data, before_step=drop)
    assert _layout(fused.state_dict()) == _layout(ref.state_dict())
    fused_steps = {i: s.get("step") for i, s in fused.state_dict()["state"].items()}
    ref_steps = {i: s.get("step") for i, s in ref.state_dict()["state"].items()}
    assert fused_steps.keys() == ref_steps.keys()
    for i in ref_steps:
        assert float(fused_steps[i] or 0) == float(ref_steps[i] or 0)


@cases(DEFAULTS)
def test_reference_checkpoint_loads_into_fused_and_back(request, case):
    """reference 6 steps -> checkpoint -> fused 6 steps -> checkpoint -> reference 6 steps ends
    where 18 uninterrupted reference steps end."""
    cls, source, name, options = case
    ref_cls = reference(request, source, name)
    data = batches(18)
    model, model_ref = make_model(), make_model()
    first = ref_cls(model.parameters(), **options)
    train(model, first, data[:6])
    fused = cls(model.parameters(), **options)
    fused.load_state_dict(_roundtrip(first.state_dict()))
    train(model, fused, data[6:12])
    last = ref_cls(model.parameters(), **options)
    last.load_state_dict(_roundtrip(fused.state_dict()))
    train(model, last, data[12:])
    train(model_ref, ref_cls(model_ref.parameters(), **options), data)
    assert_models_match(model, model_ref)


@cases(DEFAULTS)
def test_fused_checkpoint_resumes_fused(request, case):
    cls, _, _, options = case
    data = batches(12)
    model_a, model_b = make_model(), make_model()
    train(model_a, cls(model_a.parameters(), **options), data)
    first = cls(model_b.parameters(), **options)
    train(model_b, first, data[:6])
    resumed = cls(model_b.parameters(), **options)
    resumed.load_state_dict(_roundtrip(first.state_dict()))
    train(model_b, resumed, data[6:])
    assert_models_match(model_a, model_b, rtol=0.0)
