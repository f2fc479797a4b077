"""TP002, device indices: an integer (or a name that holds one) where torch reads a CUDA device
becomes the target's device with that index; integers anywhere else are numbers."""

import pytest

from torchport.targets.fallbacks import ONE_DEVICE_DATA_PARALLEL_CLASS
from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, per_target

CODE = "TP002"

ONE_DEVICE = "\n\n" + ONE_DEVICE_DATA_PARALLEL_CLASS + "\n\n\n"  # (TP025's, where DataParallel cannot run)


CASES = [
    pytest.param(
        TORCH + "x = torch.ones(2).to(0)\n",
        {
            "npu": TORCH_NPU + 'x = torch.ones(2).to("npu:0")\n',
            "xpu": TORCH + 'x = torch.ones(2).to("xpu:0")\n',
            "mps": TORCH + 'x = torch.ones(2).to("mps")\n',
            "cpu": TORCH + 'x = torch.ones(2).to("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'x = torch.ones(2).to(f"{DEVICE_TYPE}:0")\n',
        },
        id=".to(0)",
    ),
    pytest.param(
        TORCH + "y = torch.zeros(2, device=1)\n",
        {
            "npu": TORCH_NPU + 'y = torch.zeros(2, device="npu:1")\n',
            "xpu": TORCH + 'y = torch.zeros(2, device="xpu:1")\n',
            "mps": TORCH + 'y = torch.zeros(2, device="mps")\n',
            "cpu": TORCH + 'y = torch.zeros(2, device="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'y = torch.zeros(2, device=f"{DEVICE_TYPE}:1")\n',
        },
        id="device=1 as a keyword",
    ),
    pytest.param(
        TORCH + "d = torch.device(1)\n",
        {
            "npu": TORCH_NPU + 'd = torch.device("npu:1")\n',
            "xpu": TORCH + 'd = torch.device("xpu:1")\n',
            "mps": TORCH + 'd = torch.device("mps")\n',
            "cpu": TORCH + 'd = torch.device("cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'd = torch.device(f"{DEVICE_TYPE}:1")\n',
        },
        id="torch.device(1)",
    ),
    pytest.param(
        TORCH + 'state = torch.load("ckpt.pt", map_location=0)\n',
        {
            "npu": TORCH_NPU + 'state = torch.load("ckpt.pt", map_location="npu:0")\n',
            "xpu": TORCH + 'state = torch.load("ckpt.pt", map_location="xpu:0")\n',
            "mps": TORCH + 'state = torch.load("ckpt.pt", map_location="mps")\n',
            "cpu": TORCH + 'state = torch.load("ckpt.pt", map_location="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + 'state = torch.load("ckpt.pt", map_location=DEVICE_TYPE)\n',
        },
        id="map_location=0 (a device type on accelerator: torch.load restores nothing on cpu:0)",
    ),
    pytest.param(
        TORCH + "model = torch.nn.DataParallel(model, device_ids=[0, 1])\n",
        {
            # an index in device_ids is one on the module's own device type, on every target
            "npu": TORCH_NPU + ONE_DEVICE + "model = OneDeviceDataParallel(model, device_ids=[0, 1])\n",
            "xpu": TORCH + ONE_DEVICE + "model = OneDeviceDataParallel(model, device_ids=[0, 1])\n",
            "mps": UNCHANGED,
            "cpu": UNCHANGED,
            "accelerator": TORCH + ONE_DEVICE + "model = (torch.nn.DataParallel if torch.version.cuda else OneDeviceDataParallel)(model, device_ids=[0, 1])\n",
        },
        id="the elements of device_ids stay ints",
    ),
    pytest.param(
        TORCH + "import torch.distributed as dist\ndist.barrier(device_ids=[0])\n",
        {"default": UNCHANGED},
        id="dist.barrier's device_ids stay ints: torch refuses anything else (YOLOv5's torch_distributed_zero_first)",
    ),
    pytest.param(
        TORCH + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
        "model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id=0)\n",
        {
            "npu": TORCH_NPU + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
            'model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id="npu:0")\n',
            "xpu": TORCH + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
            'model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id="xpu:0")\n',
            "mps": TORCH + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
            'model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id="mps")\n',
            "cpu": TORCH + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
            'model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id="cpu")\n',
            "accelerator": TORCH_DEVICE_TYPE + "config = Config(w)\nconfig.enable_use_gpu(memory_pool_init_size_mb=2048, device_id=0)\n"
            'model = torch.distributed.fsdp.FullyShardedDataParallel(model, device_id=f"{DEVICE_TYPE}:0")\n',
        },
        id="device_id=0 of another library's call (PaddlePaddle's, in YOLOv5) is its own: only torch's is rewritten",
    ),
    pytest.param(
        "import os\n"
        "import torch\n"
        "class Trainer:\n"
        "    def __init__(self, model):\n"
        '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
        "        self.model = model.to(self.gpu_id)\n"
        "\n"
        "    def step(self, x, dtype):\n"
        "        x = x.to(self.gpu_id, non_blocking=True)\n"
        "        return x.to(dtype)\n",
        {
            "npu": (
                "import os\n"
                "import torch\n"
                "import torch_npu\n"
                "class Trainer:\n"
                "    def __init__(self, model):\n"
                '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
                '        self.model = model.to(torch.device("npu", self.gpu_id))\n'
                "\n"
                "    def step(self, x, dtype):\n"
                '        x = x.to(torch.device("npu", self.gpu_id), non_blocking=True)\n'
                "        return x.to(dtype)\n"
            ),
            "xpu": (
                "import os\n"
                "import torch\n"
                "class Trainer:\n"
                "    def __init__(self, model):\n"
                '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
                '        self.model = model.to(torch.device("xpu", self.gpu_id))\n'
                "\n"
                "    def step(self, x, dtype):\n"
                '        x = x.to(torch.device("xpu", self.gpu_id), non_blocking=True)\n'
                "        return x.to(dtype)\n"
            ),
            "mps": (
                "import os\n"
                "import torch\n"
                "class Trainer:\n"
                "    def __init__(self, model):\n"
                '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
                '        self.model = model.to("mps")\n'
                "\n"
                "    def step(self, x, dtype):\n"
                '        x = x.to("mps", non_blocking=True)\n'
                "        return x.to(dtype)\n"
            ),
            "cpu": (
                "import os\n"
                "import torch\n"
                "class Trainer:\n"
                "    def __init__(self, model):\n"
                '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
                '        self.model = model.to("cpu")\n'
                "\n"
                "    def step(self, x, dtype):\n"
                '        x = x.to("cpu", non_blocking=True)\n'
                "        return x.to(dtype)\n"
            ),
            "accelerator": (
                "import os\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "class Trainer:\n"
                "    def __init__(self, model):\n"
                '        self.gpu_id = int(os.environ["LOCAL_RANK"])\n'
                "        self.model = model.to(torch.device(DEVICE_TYPE, self.gpu_id))\n"
                "\n"
                "    def step(self, x, dtype):\n"
                "        x = x.to(torch.device(DEVICE_TYPE, self.gpu_id), non_blocking=True)\n"
                "        return x.to(dtype)\n"
            ),
        },
        id="an attribute assigned from LOCAL_RANK, and a dtype moved with .to()",
    ),
    pytest.param(
        TORCH + (
            "import torch.multiprocessing as mp\n"
            "def worker(rank, world_size):\n"
            '    state = torch.load("ckpt.pt", map_location=rank)\n'
            "    return torch.zeros(2, device=rank)\n"
            "mp.spawn(worker, args=(2,), nprocs=torch.cuda.device_count())\n"
        ),
        {
            "npu": TORCH + (
                "import torch.multiprocessing as mp\n"
                "import torch_npu\n"
                "def worker(rank, world_size):\n"
                '    state = torch.load("ckpt.pt", map_location=torch.device("npu", rank))\n'
                '    return torch.zeros(2, device=torch.device("npu", rank))\n'
                "mp.spawn(worker, args=(2,), nprocs=torch.npu.device_count())\n"
            ),
            "xpu": TORCH + (
                "import torch.multiprocessing as mp\n"
                "def worker(rank, world_size):\n"
                '    state = torch.load("ckpt.pt", map_location=torch.device("xpu", rank))\n'
                '    return torch.zeros(2, device=torch.device("xpu", rank))\n'
                "mp.spawn(worker, args=(2,), nprocs=torch.xpu.device_count())\n"
            ),
            "mps": TORCH + (
                "import torch.multiprocessing as mp\n"
                "def worker(rank, world_size):\n"
                '    state = torch.load("ckpt.pt", map_location="mps")\n'
                '    return torch.zeros(2, device="mps")\n'
                "mp.spawn(worker, args=(2,), nprocs=torch.mps.device_count())\n"
            ),
            "cpu": (
                "import os\n"
                "\n"
                "import torch\n"
                "import torch.multiprocessing as mp\n"
                "\n"
                "\n"
                "def host_device_count():\n"
                '    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""\n'
                '    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))\n'
                "\n"
                "\n"
                "def worker(rank, world_size):\n"
                '    state = torch.load("ckpt.pt", map_location="cpu")\n'
                '    return torch.zeros(2, device="cpu")\n'
                "mp.spawn(worker, args=(2,), nprocs=host_device_count())\n"
            ),
            "accelerator": (
                "import os\n"
                "\n"
                "import torch\n"
                "import torch.multiprocessing as mp\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "\n"
                "\n"
                "def host_device_count():\n"
                '    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""\n'
                '    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))\n'
                "\n"
                "\n"
                "def worker(rank, world_size):\n"
                '    state = torch.load("ckpt.pt", map_location=DEVICE_TYPE)\n'
                "    return torch.zeros(2, device=torch.device(DEVICE_TYPE, rank))\n"
                "mp.spawn(worker, args=(2,), nprocs=(torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count()))\n"
            ),
        },
        id="the rank that mp.spawn passes; the process count, one per launched process on the CPU",
    ),
    pytest.param(
        "import argparse\n"
        "import torch\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--local_rank", type=int, default=0)\n'
        "args = parser.parse_args()\n"
        "model.to(args.local_rank)\n",
        {
            "npu": (
                "import argparse\n"
                "import torch\n"
                "import torch_npu\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--local_rank", type=int, default=0)\n'
                "args = parser.parse_args()\n"
                'model.to(torch.device("npu", args.local_rank))\n'
            ),
            "xpu": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--local_rank", type=int, default=0)\n'
                "args = parser.parse_args()\n"
                'model.to(torch.device("xpu", args.local_rank))\n'
            ),
            "mps": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--local_rank", type=int, default=0)\n'
                "args = parser.parse_args()\n"
                'model.to("mps")\n'
            ),
            "cpu": (
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--local_rank", type=int, default=0)\n'
                "args = parser.parse_args()\n"
                'model.to("cpu")\n'
            ),
            "accelerator": (
                "import argparse\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "parser = argparse.ArgumentParser()\n"
                'parser.add_argument("--local_rank", type=int, default=0)\n'
                "args = parser.parse_args()\n"
                "model.to(torch.device(DEVICE_TYPE, args.local_rank))\n"
            ),
        },
        id="a --local_rank option",
    ),
    pytest.param(
        TORCH + (
            "count = torch.ones(3).sum(0)\n"
            "x = x.to(dtype)\n"
        ),
        {
            "default": UNCHANGED,
        },
        id="a dimension and a dtype are not device indices",
    ),
    pytest.param(
        TORCH + (
            "from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
            "ddp_model = DDP(model, device_ids)\n"
            "labels = torch.randn(20, 5).to(device_ids[0])\n"
            "dp = DDP(net, device_ids=self.gpus)\n"
            "x = x.to(self.gpus[0], non_blocking=True)\n"
            "y = y.to(ids[0])\n"
        ),
        {
            "cpu": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
                "ddp_model = DDP(model)\n"
                'labels = torch.randn(20, 5).to("cpu")\n'
                "dp = DDP(net)\n"
                'x = x.to("cpu", non_blocking=True)\n'
                "y = y.to(ids[0])\n"
            ),
            "mps": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
                "ddp_model = DDP(model, device_ids)\n"
                'labels = torch.randn(20, 5).to("mps")\n'
                "dp = DDP(net, device_ids=self.gpus)\n"
                'x = x.to("mps", non_blocking=True)\n'
                "y = y.to(ids[0])\n"
            ),
            "npu": TORCH_NPU + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
                "ddp_model = DDP(model, device_ids)\n"
                'labels = torch.randn(20, 5).to(torch.device("npu", device_ids[0]))\n'
                "dp = DDP(net, device_ids=self.gpus)\n"
                'x = x.to(torch.device("npu", self.gpus[0]), non_blocking=True)\n'
                "y = y.to(ids[0])\n"
            ),
            "xpu": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
                "ddp_model = DDP(model, device_ids)\n"
                'labels = torch.randn(20, 5).to(torch.device("xpu", device_ids[0]))\n'
                "dp = DDP(net, device_ids=self.gpus)\n"
                'x = x.to(torch.device("xpu", self.gpus[0]), non_blocking=True)\n'
                "y = y.to(ids[0])\n"
            ),
            "accelerator": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "device_ids = list(range(local_rank * n, (local_rank + 1) * n))\n"
                "ddp_model = DDP(model, device_ids if torch.accelerator.is_available() else None)\n"
                "labels = torch.randn(20, 5).to(torch.device(DEVICE_TYPE, device_ids[0]))\n"
                "dp = DDP(net, device_ids=self.gpus if torch.accelerator.is_available() else None)\n"
                "x = x.to(torch.device(DEVICE_TYPE, self.gpus[0]), non_blocking=True)\n"
                "y = y.to(ids[0])\n"
            ),
        },
        id="an element of a list passed as device_ids (the DDP tutorial's .to(device_ids[0])); other lists left alone",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_device_indices_become_target_devices(source, target, expected):
    assert_migrates(source, target, expected)
