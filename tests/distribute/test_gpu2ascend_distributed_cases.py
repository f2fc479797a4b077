"""The cases of Ascend's own rule tests for the distributed mode of its migration tool
(msFmkTransplt / GPU2Ascend, `test/msFmkTransplt/testCases/test_rules.py`:
`test_insert_main_file_rule` and `test_distributed_data_parallel_rule`), written as the CUDA code
each stands for, made multi-card with `distribute_source` and migrated to npu.

Judged by meaning, not by GPU2Ascend's text: the process group is initialised on hccl and each
process's device set (GPU2Ascend: `DEVICE_ID`/`RANK_ID`/`RANK_SIZE` read at import time); the
model is wrapped in DDP with `broadcast_buffers=False` once it is on its device and after apex
(GPU2Ascend adds `model = model.npu()` and an `isinstance` test instead); DataParallel goes; a
state dict loaded after the wrap is the module's; a file with no model keeps its code. (The
DataLoaderRule cases are in test_loaders_gpu2ascend_cases.py.)
"""

import pytest

from torchport import targets
from torchport.distribute import Options, distribute_source
from torchport.migrate import migrate_source

DDP = "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK], broadcast_buffers=False)\n"
# (a model moved to its device only under a condition: DDP takes the module's own device)
DDP_ANY_DEVICE = "model = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)\n"


def distributed(source: str) -> str:
    return distribute_source(source, "train.py", Options(entry=True)).source


def on_npu(source: str) -> str:
    result = migrate_source(source.encode(), targets.get("npu"), "train.py")
    assert result.error is None
    return result.source.decode()


def test_insert_main_file_rule_the_process_group_is_made_on_hccl_and_the_device_set():
    source = "import torch\n\ndef train():\n    pass\n\nif __name__ == '__main__':\n    train()\n"
    npu = on_npu(distributed(source))
    assert "import torch_npu\n" in npu
    assert 'torch.distributed.init_process_group("hccl")' in npu
    assert "torch.npu.set_device(LOCAL_RANK)" in npu
    assert 'LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))' in npu
    assert "nccl" not in npu and "torch.cuda" not in npu
    # in the __main__ block, before the call that trains; the group closed after it
    guard = npu.index("if __name__ == '__main__':")
    assert guard < npu.index("init_process_group") < npu.index("    train()") < npu.index("destroy_process_group()")
    compile(npu, "train.py", "exec")


# (the CUDA source, the statement the DDP wrap follows, the statement it precedes or None)
DDP_CASES = [
    pytest.param(
        "model = EAST(pretrained=False)\n\nmodel.to(device)\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)\n"
        "scheduler = lr_scheduler.MultiStepLR(optimizer, milestones=[args.epoch_iter // 2], gamma=0.1)\n",
        "model.to(device)\n", "optimizer = torch.optim.Adam(", id="moved to its device, then the optimizer"),
    pytest.param(
        "model, dataset = EAST(pretrained=False), DateSet()\n\nmodel.to(device)\n"
        "optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)\n"
        "scheduler = lr_scheduler.MultiStepLR(optimizer, milestones=[args.epoch_iter // 2], gamma=0.1)\n",
        "model.to(device)\n", "optimizer = torch.optim.Adam(", id="made in a tuple assignment"),
    pytest.param(
        "import torch\nfrom apex import amp\n\nmodel = EAST()\nmodel = model.cuda()\nmodel = model.to(device)\n"
        "model, opt = amp.initialize(model, opt)\nmodel = torch.nn.DataParallel(model)\n",
        "model, opt = amp.initialize(model, opt)\n", None, id="apex, then DataParallel"),
    pytest.param(
        "import torch\nfrom apex import amp\n\nmodel = EAST()\nif args.fp16:\n    model, opt = amp.initialize(model, opt)\n"
        "if args.resume:\n    model = model.load_state_dict('model.npz')\n",
        "    model, opt = amp.initialize(model, opt)\n", "if args.resume:", id="apex under a flag, then a resume"),
]


@pytest.mark.parametrize(("source", "after", "before"), DDP_CASES)
def test_distributed_data_parallel_rule_wraps_the_model_once_it_is_on_its_device(source, after, before):
    cuda = distributed(source)
    assert cuda.count("DistributedDataParallel(") == 1
    wrap = DDP if not after.startswith(" ") else DDP_ANY_DEVICE
    assert after + wrap in cuda  # at the module's level, right after its last preparation
    if before is not None:
        assert cuda.index(wrap) < cuda.index(before)
    assert "DataParallel(model)" not in cuda.replace("DistributedDataParallel(model", "")
    npu = on_npu(cuda)
    assert 'init_process_group("hccl")' in npu and "torch.npu.set_device(LOCAL_RANK)" in npu
    assert wrap in npu  # the device_ids stay on npu: one device per process
    compile(npu, "train.py", "exec")


def test_distributed_data_parallel_rule_a_state_dict_loaded_after_the_wrap_is_the_modules():
    source = DDP_CASES[3].values[0]
    assert "    model = model.module.load_state_dict('model.npz')\n" in distributed(source)


def test_distributed_data_parallel_rule_a_file_without_a_model_keeps_its_code():
    source = ("import torch\nif config['deep_supervision']:\n    output = model(input)[-1]\n"
              "else:\n    output = model(input)\n")
    result = distribute_source(source, "train.py", Options(entry=True))
    assert "DistributedDataParallel" not in result.source
    assert source.split("\n", 1)[1] in result.source  # the code as it was, below the setup
    assert [f.code for f in result.findings if f.code == "TP203"] == ["TP203"]  # one row: no model found
