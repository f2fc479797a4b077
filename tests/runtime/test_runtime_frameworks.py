"""Frameworks' settings under `run` (patch_frameworks.py): what transformers, diffusers and Lightning
are asked for in CUDA's terms reaches them in the target's. The libraries' own classes are stood in
for by modules of the same names with the methods torchport patches, so that the test reads only the
patch (tests/fidelity/test_framework_projects.py trains with the real libraries)."""

from __future__ import annotations

import sys
import types

import pytest


class _Model:
    def _check_and_adjust_attn_implementation(self, attn_implementation, is_init_check=False):
        return attn_implementation

    def enable_xformers_memory_efficient_attention(self, attention_op=None):
        raise ModuleNotFoundError("xformers")


class _Connector:
    def __init__(self, accelerator="auto", devices="auto", precision=None):
        self.accelerator, self.precision = accelerator, precision


@pytest.fixture
def libraries(monkeypatch):
    """transformers.modeling_utils, diffusers.models.modeling_utils and lightning.fabric.connector, as
    imported by a script before `run` patches (their classes fresh for each test)."""
    found = {}
    for name, owner, cls in (("transformers.modeling_utils", "PreTrainedModel", _Model),
                             ("diffusers.models.modeling_utils", "ModelMixin", _Model),
                             ("lightning.fabric.connector", "_Connector", _Connector)):
        module = types.ModuleType(name)
        setattr(module, owner, type(owner, (cls,), {}))
        monkeypatch.setitem(sys.modules, name, module)
        found[name] = getattr(module, owner)
    return found


@pytest.mark.parametrize("target", ["cpu", "accelerator"])
def test_flash_attention_asked_for_is_sdpa_and_others_are_kept(runtime_on, libraries, target):
    runtime_on(target)
    model = libraries["transformers.modeling_utils"]()
    assert model._check_and_adjust_attn_implementation("flash_attention_2") == "sdpa"
    assert model._check_and_adjust_attn_implementation("flash_attention_3", is_init_check=True) == "sdpa"
    assert model._check_and_adjust_attn_implementation("eager") == "eager"
    assert model._check_and_adjust_attn_implementation(None) is None


def test_diffusers_xformers_switch_does_nothing(runtime_on, libraries):
    runtime_on("cpu")
    assert libraries["diffusers.models.modeling_utils"]().enable_xformers_memory_efficient_attention() is None


@pytest.mark.parametrize(("target", "asked", "accelerator", "precision"), [
    ("cpu", dict(accelerator="gpu", precision="16-mixed"), "cpu", "bf16-mixed"),
    ("cpu", dict(accelerator="cuda", precision=16), "cpu", "bf16-mixed"),
    ("cpu", dict(accelerator="auto", precision="bf16-mixed"), "auto", "bf16-mixed"),
    ("accelerator", dict(accelerator="gpu", precision="16-mixed"), "auto", "16-mixed"),
])
def test_lightning_is_told_the_targets_accelerator_and_precision(runtime_on, libraries, target, asked, accelerator,
                                                                  precision):
    runtime_on(target)
    connector = libraries["lightning.fabric.connector"](**asked)
    assert (connector.accelerator, connector.precision) == (accelerator, precision)


def test_undo_gives_the_libraries_their_own_methods(runtime_on, libraries):
    from torchport import runtime

    runtime_on("cpu")
    runtime.undo()
    assert libraries["transformers.modeling_utils"]()._check_and_adjust_attn_implementation("flash_attention_2") == (
        "flash_attention_2")
    assert libraries["lightning.fabric.connector"](accelerator="gpu").accelerator == "gpu"
