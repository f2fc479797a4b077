"""init_process_group("nccl"), DDP(device_ids=...) and DataParallel on the target."""

from __future__ import annotations

import gc

import pytest
import torch
import torch.distributed as dist

from torchport.apis.distributed import map_backend


@pytest.mark.parametrize(
    "given, device_type, backend, expected",
    [("nccl", "cpu", "gloo", "gloo"), ("NCCL", "cpu", "gloo", "gloo"), ("gloo", "cpu", "gloo", None),
     ("cuda:nccl,cpu:gloo", "cpu", "gloo", "gloo"),
     ("cuda:nccl,cpu:gloo", "xpu", "xccl", "xpu:xccl,cpu:gloo"), (None, "cpu", "gloo", None),
     ("cuda:nccl,cpu:gloo", "mps", "gloo", "gloo"),  # (gloo serves the CPU's tensors only)
     ("cpu:gloo,cuda:nccl", "npu", "hccl", "cpu:gloo,npu:hccl"), ("cpu:gloo", "npu", "hccl", None)],
)
def test_map_backend(given, device_type, backend, expected):
    assert map_backend(given, backend, device_type) == expected


def test_nccl_process_group_and_ddp_with_device_ids_run_on_gloo(runtime_on, tmp_path):
    runtime_on("cpu")
    dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        assert dist.get_backend() == "gloo"
        model = torch.nn.Linear(3, 1).to(torch.device("cuda:0"))
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], output_device=0)
        ddp(torch.randn(4, 3)).sum().backward()
        assert model.weight.grad is not None
        total = torch.ones(2, device="cuda")
        dist.all_reduce(total)
        assert total.tolist() == [1.0, 1.0]
    finally:
        # DDP sits in reference cycles: free its reducer before the group, or gloo can abort or
        # hang when the interpreter exits (seen once as pytest hanging after the last test).
        ddp = model = None
        gc.collect()
        dist.destroy_process_group()


@pytest.mark.parametrize("device_id", [0, "cuda:0", "device"], ids=["an index", "a name", "torch.device"])
def test_a_process_group_bound_to_a_cuda_device_runs_unbound_on_the_cpu(runtime_on, tmp_path, device_id):
    """`init_process_group(..., device_id=...)` (torchtitan, recent DDP scripts): torch refuses a
    device id without an accelerator, an int as much as torch.device("cpu")."""
    runtime_on("cpu")
    device = torch.device("cuda", 0) if device_id == "device" else device_id
    dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1, device_id=device)
    try:
        total = torch.ones(2, device="cuda")
        dist.all_reduce(total)
        assert total.tolist() == [1.0, 1.0]
    finally:
        dist.destroy_process_group()


def test_a_backend_per_device_and_a_cuda_device_mesh_shard_a_model_on_the_cpu(runtime_on, tmp_path):
    """torchtitan's set-up: "cuda:nccl,cpu:gloo", a mesh on "cuda" and FSDP2's fully_shard onto it.
    torch would set a CUDA device for the mesh and find no NCCL."""
    session = runtime_on("cpu")
    from torch.distributed.device_mesh import init_device_mesh  # (as the script imports it: under the run)
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("cuda:nccl,cpu:gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        mesh = init_device_mesh("cuda", (1,), mesh_dim_names=("dp",))
        assert mesh.device_type == "cpu"
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2, device="cuda")
        fully_shard(model, mesh=mesh)
        model(torch.ones(3, 4, device="cuda")).sum().backward()
        assert model.weight.grad.to_local().shape == (2, 4)
        logged = [verdict.describe() for _, verdict in session.log.sites]
        assert "torch.distributed.device_mesh.init_device_mesh('cuda') -> " \
               "torch.distributed.device_mesh.init_device_mesh('cpu') [same]" in logged
    finally:
        dist.destroy_process_group()


def test_fsdp1_on_the_cpu_says_why_and_what_runs_there(runtime_on):
    """torch refuses FSDP1 without an accelerator from deep in its set-up: the script's call says so."""
    from torchport.runtime import UnsupportedOnTarget

    session = runtime_on("cpu")
    from torch.distributed.fsdp import FullyShardedDataParallel

    with pytest.raises(UnsupportedOnTarget, match=r"FullyShardedDataParallel is not supported on target cpu: .*fully_shard"):
        FullyShardedDataParallel(torch.nn.Linear(2, 2))
    assert any(v.api.endswith("FullyShardedDataParallel") for _, v in session.log.sites)


def test_data_parallel_on_one_device_is_a_pass_through(runtime_on):
    runtime_on("cpu")
    model = torch.nn.Linear(3, 2)
    with pytest.warns(RuntimeWarning, match="DataParallel"):
        wrapped = torch.nn.DataParallel(model)
    x = torch.randn(5, 3)
    assert torch.equal(wrapped(x), model(x))
    assert set(wrapped.state_dict()) == {"module.weight", "module.bias"}


def test_data_parallel_over_several_devices_runs_on_one_and_says_so(runtime_on):
    session = runtime_on("cpu")
    net = torch.nn.Linear(3, 2)
    with pytest.warns(RuntimeWarning, match="one cpu device .asked for 2 devices"):
        wrapped = torch.nn.parallel.DataParallel(net, device_ids=[0, 1], output_device=0)
    x = torch.randn(5, 3)
    assert torch.equal(wrapped(x), net(x))
    assert isinstance(wrapped, torch.nn.DataParallel) and wrapped.module is net and wrapped.device_ids == []
    assert set(wrapped.state_dict()) == {"module.weight", "module.bias"}
    assert any("DistributedDataParallel with one process per device" in line for line in _log_lines(session))


def test_data_parallel_function_applies_the_module_once(runtime_on):
    runtime_on("cpu")
    net = torch.nn.Linear(3, 2)
    x = torch.randn(5, 3)
    # (torch's own finds no device off CUDA: "device type could not be determined")
    assert torch.equal(torch.nn.parallel.data_parallel(net, x, device_ids=[0, 1]), net(x))
    assert torch.equal(torch.nn.parallel.data_parallel(net, (x,)), net(x))


def test_data_parallel_moves_the_inputs_to_the_modules_device(runtime_on, monkeypatch):
    """On a device, torch's scatter moved a CPU batch to the module's device: so does the stand-in
    (the meta device plays the accelerator's part: what lands there computes shapes only)."""
    import torchport.runtime.patch_distributed as patch

    monkeypatch.setattr(patch, "is_host", lambda device_type: False)
    runtime_on("cpu")
    net = torch.nn.Linear(3, 2, device="meta")
    with pytest.warns(RuntimeWarning):
        wrapped = torch.nn.DataParallel(net)
    out = wrapped(torch.randn(5, 3))
    assert out.device.type == "meta" and out.shape == (5, 2)


def _log_lines(session) -> list[str]:
    return [verdict.describe() for _, verdict in session.log.sites]


def test_torchs_data_parallel_is_kept_where_it_splits_the_batch(monkeypatch):
    """On a CUDA build with a GPU (accelerator there), torch's DataParallel splits over the GPUs:
    `run` leaves it; on a device torch's cannot split over (npu, xpu) it is replaced."""
    from types import SimpleNamespace

    from torchport import targets
    from torchport.targets.expressions import evaluate
    from torchport.runtime.patch_distributed import _keeps_torchs_data_parallel

    def session(target, device_type):
        target = targets.get(target)
        return SimpleNamespace(target=target, device_type=device_type,
                               evaluate=lambda e: evaluate(e, device_type, target.definitions))

    monkeypatch.setattr(torch.version, "cuda", "12.8")
    assert _keeps_torchs_data_parallel(session("accelerator", "cuda"), torch)
    assert not _keeps_torchs_data_parallel(session("npu", "npu"), torch)
    assert not _keeps_torchs_data_parallel(session("cpu", "cpu"), torch)
    monkeypatch.setattr(torch.version, "cuda", None)
    assert not _keeps_torchs_data_parallel(session("accelerator", "xpu"), torch)
