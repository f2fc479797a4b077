"""The run-time patch families are found in the runtime package, each placed by its ORDER line."""

from torchport.runtime.session import families


def test_the_families_are_found_and_installed_in_the_order_they_always_were():
    """(torch_npu's stand-in first: it adds the NPU's dialect, which the others read; then devices:
    it captures the original torch.device; compilers last: it reads every replacement made before it)"""
    names = [family.__name__.rsplit(".", 1)[-1] for family in families()]
    assert names == ["patch_torch_npu", "patch_devices", "patch_cuda_module", "patch_amp", "patch_distributed", "patch_memory",
                     "patch_streams", "patch_apex", "patch_flash_attn", "patch_xformers", "patch_bitsandbytes", "patch_frameworks",
                     "patch_cuda_only", "patch_compilers"]


def test_every_family_has_its_own_place_and_an_install():
    found = families()
    assert len({family.ORDER for family in found}) == len(found)
    assert all(callable(family.install) for family in found)
