"""TP117, advice: apex kept for Ascend's build (`--apex keep`, the npu default): `combine_grad=True`
on `amp.initialize` where it is missing, and Ascend apex's `NpuFused*` optimizers for apex's CUDA
fused ones; torch's optimizers get the same twin in TP110's row (no second row)."""

import pytest

from _fixture_cases import TORCH, assert_rows, per_target
from torchport import targets
from torchport.findings import Operation
from torchport.migrate import migrate_source

CODE = "TP117"

APEX_AMP = TORCH + "from apex import amp\n"

ROWS = [
    pytest.param(
        APEX_AMP + 'model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)\n',
        {"npu": [("TP117", 3, "PERFORMANCE")], "default": []},
        id="amp.initialize without combine_grad, as the guide's MobileNetV1 case starts",
    ),
    pytest.param(
        APEX_AMP + 'model, optimizer = amp.initialize(model, optimizer, opt_level="O2", combine_grad=True)\n',
        {"default": []},
        id="amp.initialize with combine_grad already: no row",
    ),
    pytest.param(
        APEX_AMP + "model, optimizer = amp.initialize(model, optimizer, **amp_options)\n",
        {"default": []},
        id="amp.initialize with **options that may set combine_grad: no row",
    ),
    pytest.param(
        TORCH + "import apex\n"
        "model, optimizer = apex.amp.initialize(model, optimizer)\n",
        {"npu": [("TP117", 3, "PERFORMANCE")], "default": []},
        id="apex.amp.initialize through import apex",
    ),
    pytest.param(
        TORCH + (
            "from apex.optimizers import FusedAdam, FusedLAMB, FusedNovoGrad\n"
            "a = FusedAdam(model.parameters(), lr=1e-3)\n"
            "b = FusedLAMB(model.parameters(), lr=1e-3)\n"
            "c = FusedNovoGrad(model.parameters(), lr=1e-3)\n"
        ),
        {"npu": [("TP117", 3, "PERFORMANCE"), ("TP117", 4, "PERFORMANCE")], "default": []},
        id="apex's FusedAdam and FusedLAMB have NpuFused twins, FusedNovoGrad none",
    ),
    pytest.param(
        TORCH + (
            "import apex.optimizers as apex_optim\n"
            "a = apex_optim.fused_sgd.FusedSGD(model.parameters(), lr=0.1)\n"
            "b = apex_optim.NpuFusedSGD(model.parameters(), lr=0.1)\n"
        ),
        {"npu": [("TP117", 3, "PERFORMANCE")], "default": []},
        id="FusedSGD by its module path gets a row, an NpuFused optimizer none",
    ),
    pytest.param(
        TORCH + "amp = make_amp()\nmodel, optimizer = amp.initialize(model, optimizer)\n",
        {"default": []},
        id="a script's own amp object is not apex's",
    ),
]


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_advice_is_a_row_at_its_line(source, target, rows):
    assert_rows(source, target, rows, CODE)


def _messages(source: str, code: str, keep_apex: bool | None = None) -> list[str]:
    result = migrate_source(source.encode(), targets.get("npu"), "case.py", keep_apex=keep_apex)
    return [f.message for f in result.findings if f.code == code]


def test_fused_adam_picks_the_twin_its_adam_w_mode_says():
    source = TORCH + (
        "from apex.optimizers import FusedAdam\n"
        "a = FusedAdam(model.parameters(), lr=1e-3)\n"
        "b = FusedAdam(model.parameters(), lr=1e-3, adam_w_mode=False)\n"
    )
    first, second = _messages(source, CODE)
    assert first.startswith("use apex.optimizers.NpuFusedAdamW:") and second.startswith("use apex.optimizers.NpuFusedAdam:")


def test_with_apex_native_nothing_is_advised_for_apex():
    """--apex native: the file is converted before the rules see it; should a conversion leave
    apex (a failure), the rows for Ascend's apex do not come either."""
    source = APEX_AMP + "model, optimizer = amp.initialize(model, optimizer)\nopt = torch.optim.SGD(params, lr=0.1)\n"
    assert _messages(source, CODE, keep_apex=False) == []
    assert "apex.optimizers" not in _messages(source, "TP110", keep_apex=False)[0]


def test_torch_optimizer_in_a_file_keeping_apex_gets_the_apex_twin_in_its_affinity_row():
    with_apex = _messages(APEX_AMP + "opt = torch.optim.SGD(params, lr=0.1)\n", "TP110")
    without = _messages(TORCH + "opt = torch.optim.SGD(params, lr=0.1)\n", "TP110")
    assert with_apex[0].startswith("apex.optimizers.NpuFusedSGD: ") and "combine_grad=True" in with_apex[0]
    assert without[0].startswith("torch_npu.optim.NpuFusedSGD: ") and "apex" not in without[0]
    rows = migrate_source((APEX_AMP + "opt = torch.optim.SGD(params, lr=0.1)\n").encode(), targets.get("npu")).findings
    assert [f.operation for f in rows if f.start_line == 3 and f.code in ("TP110", CODE)] == [Operation.AFFINITY]
