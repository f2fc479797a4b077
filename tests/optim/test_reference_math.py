"""30 steps of each fused optimizer match its reference implementation to 1e-6 relative (fp32)."""

from __future__ import annotations


from _optim_cases import DEFAULTS, GRID, build, cases
from _optim_harness import assert_models_match, assert_moved, batches, make_model, train

import torchport.optim.flat as flat


@cases(GRID)
def test_matches_reference(request, case):
    fused_model = _train_both_and_compare(request, case)
    assert_moved(fused_model, make_model())


@cases([c for c in GRID if c[2] in ("SGD", "Adam", "AdamW")] + DEFAULTS[3:])
def test_pure_op_path_matches_reference(request, case, monkeypatch):
    """Devices without torch's _fused_* kernels take the chunked pure-op path; tiny chunks put
    chunk boundaries inside parameters and split runs into many pieces."""
    monkeypatch.setattr(flat, "FUSED_KERNEL_DEVICES", set())
    monkeypatch.setattr(flat, "CPU_CHUNK", 100)  # many chunks, with boundaries inside parameters
    _train_both_and_compare(request, case)


def _train_both_and_compare(request, case):
    """30 steps of the fused optimizer and of its reference on equal models, which must match."""
    fused_model, ref_model = make_model(), make_model()
    fused, ref = build(request, case, fused_model, ref_model)
    data = batches(30)
    train(fused_model, fused, data)
    train(ref_model, ref, data)
    assert_models_match(fused_model, ref_model)
    return fused_model
