"""apex.multi_tensor_apply with the stand-in's amp_C kernels, and apex.contrib's modules with a
torch form: each computes what torch (or the formula apex's kernel implements) computes, and
raises the overflow flag where apex's kernels do."""

from __future__ import annotations

import sys

import pytest
import torch

from torchport import runtime
from torchport.compat import amp_C
from torchport.compat.apex.contrib.clip_grad import clip_grad_norm_
from torchport.compat.apex.contrib.layer_norm import FastLayerNorm
from torchport.compat.apex.contrib.xentropy import SoftmaxCrossEntropyLoss
from torchport.compat.apex.multi_tensor_apply import MultiTensorApply, multi_tensor_applier


def _tensors():
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(7, generator=generator), torch.randn(3, 5, generator=generator),
            torch.randn(2, generator=generator).half()]


def _flag():
    return torch.zeros(1, dtype=torch.int)


def test_the_applier_is_available_and_calls_the_op_with_apexs_chunk_size_first():
    seen = []
    result = multi_tensor_applier(lambda *args: seen.append(args) or "done", "flag", [["t"]], 0.5)
    assert multi_tensor_applier.available and MultiTensorApply.available
    assert result == "done" and seen == [(2048 * 32, "flag", [["t"]], 0.5)]


def test_l2norm_is_the_norm_of_all_the_tensors_as_one_vector_and_each_ones_own():
    tensors, flag = _tensors(), _flag()
    total, each = multi_tensor_applier(amp_C.multi_tensor_l2norm, flag, [tensors], True)
    whole = torch.cat([t.float().flatten() for t in tensors])
    assert total.shape == (1,) and total.dtype == torch.float32
    torch.testing.assert_close(total[0], torch.linalg.vector_norm(whole))
    torch.testing.assert_close(each, torch.stack([t.float().norm() for t in tensors]))
    assert flag.item() == 0
    _, without = multi_tensor_applier(amp_C.multi_tensor_l2norm, flag, [tensors], False)
    assert without.numel() == 0


def test_l2norm_of_an_infinite_value_raises_the_overflow_flag():
    flag = _flag()
    multi_tensor_applier(amp_C.multi_tensor_l2norm, flag, [[torch.tensor([1.0, float("inf")])]], False)
    assert flag.item() == 1


def test_scale_writes_each_input_times_the_scale_into_its_output_in_the_outputs_dtype():
    inputs, flag = _tensors(), _flag()
    outputs = [torch.empty_like(t, dtype=torch.float32) for t in inputs]
    multi_tensor_applier(amp_C.multi_tensor_scale, flag, [inputs, outputs], 0.25)
    for given, written in zip(inputs, outputs):
        torch.testing.assert_close(written, given.float() * 0.25)
    assert flag.item() == 0
    multi_tensor_applier(amp_C.multi_tensor_scale, flag, [[torch.tensor([float("nan")])], [torch.zeros(1)]], 1.0)
    assert flag.item() == 1


@pytest.mark.parametrize("checked, infinite_in, raised", [(-1, "y", True), (0, "y", False), (1, "y", True),
                                                          (0, "x", True)])
def test_axpby_writes_a_x_plus_b_y_and_checks_the_argument_it_is_told_to(checked, infinite_in, raised):
    xs, ys = _tensors(), [t.flip(0) for t in _tensors()]
    outs = [torch.empty_like(t) for t in xs]
    flag = _flag()
    multi_tensor_applier(amp_C.multi_tensor_axpby, flag, [xs, ys, outs], 2.0, -0.5, checked)
    for x, y, out in zip(xs, ys, outs):
        torch.testing.assert_close(out, (2.0 * x.float() - 0.5 * y.float()).to(out.dtype))
    assert flag.item() == 0
    bad = [torch.tensor([float("inf")])]
    other = [torch.ones(1)]
    pair = (bad, other) if infinite_in == "x" else (other, bad)
    multi_tensor_applier(amp_C.multi_tensor_axpby, flag, [*pair, [torch.zeros(1)]], 1.0, 1.0, checked)
    assert flag.item() == int(raised)


def test_contrib_clip_grad_norm_clips_as_torchs_does():
    mine, theirs = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    theirs.load_state_dict(mine.state_dict())
    for model in (mine, theirs):
        model(torch.arange(8.).reshape(2, 4)).sum().backward()
    norm = clip_grad_norm_(mine.parameters(), 0.5)
    expected = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.5)
    torch.testing.assert_close(norm, expected)
    for a, b in zip(mine.parameters(), theirs.parameters()):
        torch.testing.assert_close(a.grad, b.grad)


def test_contrib_fast_layer_norm_is_torchs_layer_norm_with_apexs_state():
    layer = FastLayerNorm(6, eps=1e-6)
    x = torch.randn(2, 3, 6)
    torch.testing.assert_close(layer(x), torch.nn.functional.layer_norm(x, (6,), eps=1e-6))
    assert set(layer.state_dict()) == {"weight", "bias"} and layer.epsilon == 1e-6


def test_contrib_xentropy_is_smoothed_cross_entropy_with_padding_zeroed():
    logits = torch.randn(4, 5, generator=torch.Generator().manual_seed(1)).half()
    labels = torch.tensor([0, 3, 1, 4])
    losses = SoftmaxCrossEntropyLoss.apply(logits, labels, 0.1, 0, True)
    log_p = torch.log_softmax(logits.float(), dim=-1)
    expected = 0.9 * -log_p.gather(1, labels[:, None])[:, 0] + 0.1 * -log_p.mean(dim=-1)
    expected[0] = 0.0  # (label 0 is the padding index)
    assert losses.dtype == torch.float32
    torch.testing.assert_close(losses, expected)
    assert SoftmaxCrossEntropyLoss.apply(logits, labels, 0.1, 0).dtype == torch.float16


@pytest.fixture
def session(tmp_path):
    yield runtime.apply("cpu", log=str(tmp_path / "torchport_run.log"))
    runtime.undo()
    for name in [n for n in sys.modules if n.split(".")[0] in ("apex", "amp_C")]:
        del sys.modules[name]


def test_under_run_a_script_gets_multi_tensor_apply_and_amp_c_where_apex_is_absent(session):
    import amp_C as served_kernels
    from apex.contrib.clip_grad import clip_grad_norm_ as served_clip
    from apex.multi_tensor_apply import multi_tensor_applier as served

    assert served is multi_tensor_applier and served_kernels is amp_C and served_clip is clip_grad_norm_
    runtime.undo()
    assert "amp_C" not in sys.modules
    with pytest.raises(ImportError):
        __import__("amp_C")


MULTI_TENSOR_SCRIPT = '''import torch
from apex import amp
from apex.multi_tensor_apply import multi_tensor_applier
if multi_tensor_applier.available:
    import amp_C


def grad_norm(tensors):
    overflow = torch.zeros(1, dtype=torch.int).cuda()
    return multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow, [tensors], False)[0]
'''


def test_migrated_to_the_cpu_a_multi_tensor_script_imports_the_stand_ins_and_computes_torchs_norm():
    from torchport.migrate.workers import Choices, Job, migrate_one

    result = migrate_one(Job("norm.py", MULTI_TENSOR_SCRIPT.encode()), Choices("cpu"))
    text = result.source.decode()
    assert "import torchport.compat.amp_C as amp_C" in text
    assert "from torchport.compat.apex.multi_tensor_apply import multi_tensor_applier" in text
    assert {f.code for f in result.findings} >= {"TP307"}
    namespace: dict = {}
    exec(compile(text, "norm.py", "exec"), namespace)
    tensors = _tensors()
    torch.testing.assert_close(namespace["grad_norm"](tensors)[0],
                               torch.linalg.vector_norm(torch.cat([t.float().flatten() for t in tensors])))
    again = migrate_one(Job("norm.py", result.source), Choices("cpu"))
    assert again.source == result.source
