"""`torch.cuda.device_count()` where the CPU stands in for the GPUs (the cpu target, and accelerator
without an accelerator): one device per process the launcher started on this machine
(LOCAL_WORLD_SIZE), 1 outside a launcher; after `migrate` as under `run`.

A script launched with one process per GPU reads the count as a process count or a bound on its
rank: `assert torch.cuda.device_count() > local_rank` (detection trainers), and pytorch/examples'
DDP tutorial, `n = torch.cuda.device_count() // local_world_size` devices per rank. With the CPU's
own count (1), rank 1 fails its check and every rank gets no devices. The two-rank runs are the
pattern project tests/fidelity/projects/device_count_ranks.py (`make fidelity`).
"""

from __future__ import annotations

import pytest

from torchport import runtime, targets
from torchport.migrate import migrate_source
from torchport.targets import fallbacks
from torchport.targets.verdict import Kind

TRAINER = b"""import os
import torch

local_rank = int(os.environ["LOCAL_RANK"])
local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
assert torch.cuda.device_count() > local_rank
n = torch.cuda.device_count() // local_world_size
device_ids = list(range(local_rank * n, (local_rank + 1) * n))
"""
HOSTED = ["cpu", "accelerator"]  # the targets where the CPU stands in (accelerator: on this machine)


def _as_rank(monkeypatch, rank: int, of: int) -> None:
    monkeypatch.setenv("LOCAL_RANK", str(rank))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(of))


@pytest.fixture
def run_on(tmp_path):
    def start(target: str):
        return runtime.apply(target, log=str(tmp_path / "torchport_run.log"))

    yield start
    runtime.undo()


@pytest.mark.parametrize("target", HOSTED)
def test_the_count_where_the_cpu_stands_in_is_the_launchers_local_world_size(target):
    verdict = targets.get(target).verdict("torch.cuda.device_count")
    assert verdict.value == fallbacks.HOST_DEVICE_COUNT and "LOCAL_WORLD_SIZE" in verdict.note
    assert verdict.kind is {"cpu": Kind.NOOP, "accelerator": Kind.ADAPTED}[target]


def test_device_targets_keep_their_own_count():
    device_targets = [name for name in targets.names() if name not in ("cuda", *HOSTED)]
    assert {"npu", "xpu", "mps"} <= set(device_targets)
    for name in device_targets:  # (an added target too)
        verdict = targets.get(name).verdict("torch.cuda.device_count")
        assert (verdict.kind, verdict.replacement) == (Kind.SAME, f"{targets.get(name).device_module}.device_count"), name


def test_the_migrated_cpu_trainer_writes_the_count_once_and_uses_it_for_both():
    migrated = migrate_source(TRAINER, targets.get("cpu"), "train.py").source.decode()
    assert migrated.count("def host_device_count():") == 1
    assert "assert host_device_count() > local_rank\n" in migrated
    assert "n = host_device_count() // local_world_size\n" in migrated
    accelerator = migrate_source(TRAINER, targets.get("accelerator"), "train.py").source.decode()
    assert accelerator.count("def host_device_count():") == 1
    assert ("n = (torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count())"
            " // local_world_size\n") in accelerator


@pytest.mark.parametrize("target", HOSTED)
@pytest.mark.parametrize("rank", [0, 1])
def test_every_rank_of_two_passes_its_check_and_gets_its_device_after_migrate(monkeypatch, target, rank):
    _as_rank(monkeypatch, rank, of=2)
    namespace = {}
    exec(migrate_source(TRAINER, targets.get(target), "train.py").source, namespace)
    assert (namespace["n"], namespace["device_ids"]) == (1, [rank])


@pytest.mark.parametrize("target", HOSTED)
def test_outside_a_launcher_the_count_is_one(monkeypatch, run_on, target):
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    namespace = {}
    exec(migrate_source(b"import torch\nn = torch.cuda.device_count()\n", targets.get(target), "t.py").source, namespace)
    assert namespace["n"] == 1
    run_on(target)
    import torch

    assert torch.cuda.device_count() == 1


@pytest.mark.parametrize("target", HOSTED)
@pytest.mark.parametrize("rank", [0, 1])
def test_every_rank_of_two_passes_its_check_and_gets_its_device_under_run(monkeypatch, run_on, target, rank):
    run_on(target)
    _as_rank(monkeypatch, rank, of=2)  # (read on every call: set after the patches went in)
    namespace = {"__name__": "train"}
    exec(TRAINER, namespace)
    assert (namespace["n"], namespace["device_ids"]) == (1, [rank])


def test_data_parallel_under_a_launcher_still_runs_on_its_one_cpu(monkeypatch, run_on):
    """Its split is over this process's devices, not the launched processes: one, on the CPU."""
    import torch

    run_on("cpu")
    _as_rank(monkeypatch, 1, of=2)
    model = torch.nn.Linear(3, 2)
    with pytest.warns(RuntimeWarning, match="DataParallel"):
        wrapped = torch.nn.DataParallel(model)
    x = torch.randn(4, 3)
    assert torch.equal(wrapped(x), model(x))
