"""TP023 and the map_location spellings: a checkpoint saved on a GPU loads after migration.

The checkpoint is saved here as a GPU run saves it (every storage tagged "cuda:0", see
conftest.save_on_gpu); torch.load of it fails on this machine as it is. Each migrated spelling is
run, on cpu and on accelerator (which falls back to the CPU here).
"""

import pytest
import torch

from _ported import PORTED

from torchport import targets
from torchport.migrate import migrate_source

RUN_HERE = ["cpu", "accelerator"]


def _migrated(source: str, target: str) -> str:
    result = migrate_source(source.encode(), targets.get(target), "load.py")
    assert result.error is None
    return result.source.decode()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("torch.load(path)", 'torch.load(path, map_location="npu")', id="no map_location"),
        pytest.param("torch.load('ckpt.pt')", "torch.load('ckpt.pt', map_location='npu')", id="in the path's quotes"),
        pytest.param("torch.load(path, map_location=None)", 'torch.load(path, map_location="npu")', id="None"),
        pytest.param("torch.load(path, None)", 'torch.load(path, "npu")', id="None, passed by position"),
        pytest.param("torch.load(path, weights_only=False)", 'torch.load(path, map_location="npu", weights_only=False)',
                     id="before the keywords, weights_only kept"),
        pytest.param("torch.jit.load(path)", 'torch.jit.load(path, map_location="npu")', id="torch.jit.load"),
        pytest.param("torch.load(path, **options)", "torch.load(path, **options)", id="keywords it cannot see"),
        pytest.param("torch.load(path, map_location='cpu')", "torch.load(path, map_location='cpu')", id="a location kept"),
        pytest.param("torch.load(path, map_location=device)", "torch.load(path, map_location=device)", id="a name kept"),
    ],
)
def test_a_load_without_a_location_gets_the_targets_device(source, expected):
    assert _migrated(f"import torch\nx = {source}\n", "npu").endswith(f"x = {expected}\n")


@pytest.mark.parametrize("target", PORTED)
def test_the_device_is_the_targets_own(target):
    migrated = _migrated("import torch\nfrom torch import load\nx = load(path)\n", target)
    device_type = targets.get(target).device_type
    device = f'"{device_type}"' if device_type else "DEVICE_TYPE"
    assert f"x = load(path, map_location={device})" in migrated


def test_a_call_with_its_arguments_one_a_line_keeps_that_layout():
    source = "import torch\nx = torch.load(\n    path,\n    weights_only=True,\n)\ny = torch.load(\n    path\n)\n"
    assert _migrated(source, "cpu").endswith(
        'x = torch.load(\n    path,\n    map_location="cpu",\n    weights_only=True,\n)\n'
        'y = torch.load(\n    path,\n    map_location="cpu"\n)\n'
    )


@pytest.fixture
def gpu_checkpoint(tmp_path, save_on_gpu):
    path = tmp_path / "checkpoint.pt"
    save_on_gpu({"epoch": 3, "state_dict": {"weight": torch.arange(4.0)}}, path)
    return path


def test_the_checkpoint_does_not_load_here_as_it_is(gpu_checkpoint):
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(gpu_checkpoint)


LOADS = {
    "no map_location": "torch.load(path)",
    "None": "torch.load(path, map_location=None)",
    "a cuda literal": "torch.load(path, map_location='cuda:0')",
    "an f-string with a rank": 'torch.load(path, map_location=f"cuda:{rank}")',
    "a format call": "torch.load(path, map_location='cuda:{}'.format(rank))",
    "torch.device with a rank": "torch.load(path, map_location=torch.device('cuda', rank))",
    "a storage lambda": "torch.load(path, map_location=lambda storage, loc: storage.cuda())",
    "a storage lambda with a rank": "torch.load(path, map_location=lambda storage, loc: storage.cuda(rank))",
    "a dict": "torch.load(path, map_location={'cuda:0': 'cpu'})",
    "a dict onto cuda": "torch.load(path, map_location={'cuda:0': f'cuda:{rank}'})",
}


@pytest.mark.parametrize("target", RUN_HERE)
@pytest.mark.parametrize("spelling", LOADS)
def test_every_spelling_loads_the_gpu_checkpoint_after_migration(gpu_checkpoint, target, spelling):
    migrated = _migrated(f"import torch\n\n\ndef resume(path, rank):\n    return {LOADS[spelling]}\n", target)
    namespace = {}
    exec(compile(migrated, "load.py", "exec"), namespace)
    checkpoint = namespace["resume"](gpu_checkpoint, 0)
    assert checkpoint["epoch"] == 3 and checkpoint["state_dict"]["weight"].device.type == "cpu"
