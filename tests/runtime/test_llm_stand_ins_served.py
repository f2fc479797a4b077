"""Under `torchport run` flash_attn, xformers, bitsandbytes and rotary_emb are served where they are
not installed, and an import of a CUDA-only package nothing serves fails with a message that says
what to do: a ModuleNotFoundError (a script's ImportError fallback still runs), one line when
uncaught, logged as unsupported; importlib.util.find_spec probes and torch's own imports still see
a plain missing module."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from torchport import runtime

SERVED = ("flash_attn", "xformers", "bitsandbytes", "rotary_emb")


@pytest.fixture
def session(tmp_path):
    log = tmp_path / "torchport_run.log"
    yield runtime.apply("cpu", log=str(log)), log
    runtime.undo()
    for name in [n for n in sys.modules if n.partition(".")[0] in SERVED]:
        del sys.modules[name]


def logged(log) -> list[str]:
    text = log.read_text() if log.exists() else ""  # (no line: no file)
    return [line.split("  ", 1)[1] for line in text.splitlines() if not line.startswith("#")]


def test_the_stand_ins_are_served_under_a_session_and_gone_after_it(session):
    import bitsandbytes as bnb
    import flash_attn
    import xformers.ops
    from flash_attn.modules import mha
    from xformers.ops.fmha.attn_bias import BlockDiagonalMask

    import torchport.compat.flash_attn.modules.mha as stand_in_mha
    import torchport.compat.xformers.ops.fmha.attn_bias as stand_in_bias

    assert flash_attn.flash_attn_func.__module__ == "torchport.compat.flash_attn.flash_attn_interface"
    assert mha is stand_in_mha and BlockDiagonalMask is stand_in_bias.BlockDiagonalMask
    assert bnb.optim.AdamW8bit.__module__ == "torchport.compat.bitsandbytes.optim"
    runtime.undo()
    assert not [name for name in sys.modules if name.partition(".")[0] in SERVED]


def test_a_package_with_no_stand_in_fails_with_what_to_do_and_a_fallback_still_runs(session):
    _, log = session
    try:
        import flash_attn_2_cuda  # noqa: F401
    except ImportError as error:
        caught = error
    assert isinstance(caught, ModuleNotFoundError) and isinstance(caught, runtime.NoStandIn)
    assert "scaled_dot_product_attention" in str(caught) and caught.name == "flash_attn_2_cuda"
    with pytest.raises(runtime.NoStandIn, match="selective_scan_ref"):
        import mamba_ssm.ops.selective_scan_interface  # noqa: F401
    with pytest.raises(runtime.NoStandIn, match="no torchport stand-in"):
        import flash_attn.ops.triton.layer_norm  # noqa: F401  (a part of flash_attn the stand-in lacks)
    runtime.undo()
    lines = logged(log)
    assert any(line.startswith("import flash_attn_2_cuda -> (removed) [unsupported]") for line in lines)
    assert any(line.startswith("import mamba_ssm") for line in lines)


def test_find_spec_probes_and_unknown_names_see_a_plain_missing_module(session):
    assert importlib.util.find_spec("triton") is None and importlib.util.find_spec("selective_scan_cuda") is None
    with pytest.raises(ModuleNotFoundError) as raised:
        import surely_no_such_module  # noqa: F401
    assert not isinstance(raised.value, runtime.NoStandIn)


def test_torchs_own_probe_for_triton_gets_the_plain_error(session):
    _, log = session
    from torch.utils._triton import has_triton_package

    getattr(has_triton_package, "cache_clear", lambda: None)()
    assert has_triton_package() is False
    runtime.undo()
    assert not [line for line in logged(log) if line.startswith("import triton")]


def test_an_uncaught_import_with_no_stand_in_is_one_line_naming_the_script_line(torchport, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nimport selective_scan_cuda\n")
    result = torchport("run", "--target", "cpu", "--log", tmp_path / "run.log", script, cwd=tmp_path)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if not line.startswith("torchport: ")]
    assert errors == [f"torchport run: {script}:2: No module named 'selective_scan_cuda': torchport has no "
                      "stand-in for it; mamba's selective-scan kernel: use mamba's reference path "
                      "(mamba_ssm.ops.selective_scan_interface.selective_scan_ref) or a torch port of it"]
