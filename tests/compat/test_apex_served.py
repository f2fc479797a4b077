"""Under `torchport run` (or `import torchport.auto`) the stand-in is `apex` where no apex is
installed; a real apex is left alone; each use is logged at the script's line."""

from __future__ import annotations

import sys

import pytest
import torch

from torchport import runtime


@pytest.fixture
def session(tmp_path):
    """The cpu target applied in this process (undone afterwards), and the log it writes."""
    log = tmp_path / "torchport_run.log"
    yield runtime.apply("cpu", log=str(log)), log
    runtime.undo()
    for name in [n for n in sys.modules if n == "apex" or n.startswith("apex.")]:
        del sys.modules[name]


def test_import_apex_gets_the_stand_in_when_apex_is_absent(session):
    import apex
    import apex.amp
    from apex.amp import _amp_state
    from apex.normalization.fused_layer_norm import FusedLayerNorm
    from apex.optimizers import FusedAdam
    from apex.optimizers.fused_lamb import FusedLAMB

    import torchport.compat.apex as stand_in

    assert apex is stand_in and apex.amp is stand_in.amp and _amp_state is stand_in.amp._amp_state
    assert FusedAdam is stand_in.optimizers.FusedAdam and FusedLAMB is stand_in.optimizers.FusedLAMB
    assert FusedLayerNorm is stand_in.normalization.FusedLayerNorm
    with pytest.raises(ImportError):
        import apex.transformer  # noqa: F401  (beyond the stand-in: as without apex)
    runtime.undo()
    assert "apex" not in sys.modules and "apex.amp" not in sys.modules
    with pytest.raises(ImportError):
        import apex  # noqa: F401,F811


def test_a_real_apex_wins(session, tmp_path, monkeypatch):
    real = tmp_path / "site" / "apex"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    (real / "amp.py").write_text("REAL_AMP = True\n")
    monkeypatch.syspath_prepend(str(real.parent))
    import apex
    import apex.amp

    assert apex.REAL and apex.amp.REAL_AMP
    with pytest.raises(ImportError):
        import apex.optimizers  # noqa: F401  (the real one has none: the stand-in does not fill in)


def test_each_apex_use_is_logged_at_its_line_under_the_session(session, cpu_bf16):
    cpu_bf16(True)
    _, log = session
    from apex import amp

    model = torch.nn.Sequential(torch.nn.Linear(4, 2)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    seen = []
    model[0].register_forward_hook(lambda module, args, output: seen.append(output.dtype))
    with amp.scale_loss(model(torch.randn(3, 4).cuda()).sum(), optimizer) as scaled:
        scaled.backward()
    optimizer.step()
    runtime.undo()
    assert seen == [torch.bfloat16]  # (the session's target: bfloat16 autocast on a CPU that has it)
    lines = [line.split("  ", 1) for line in log.read_text().splitlines() if not line.startswith("#")]
    here = __file__.rsplit("/", 1)[-1]
    uses = [what.split(" ->")[0] for site, what in lines if site.split(":")[0].endswith(here)]
    assert [use for use in uses if "cuda" not in use] == [
        "import apex", "apex.amp.initialize", "apex.amp.scale_loss", "optimizer.step() after amp.initialize"]
