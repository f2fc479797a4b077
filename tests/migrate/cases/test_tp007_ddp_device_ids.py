"""TP007, `DistributedDataParallel(device_ids=..., output_device=...)`: CPU modules take neither, so
both are dropped on the CPU and given only when an accelerator is present on accelerator."""

import pytest

from _fixture_cases import TORCH, UNCHANGED, assert_migrates, per_target

CODE = "TP007"

CASES = [
    pytest.param(
        TORCH + (
            "from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "model = DDP(model, device_ids=[local_rank], output_device=local_rank)\n"
        ),
        {
            "cpu": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "model = DDP(model)\n"
            ),
            "accelerator": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "model = DDP(model, device_ids=[local_rank] if torch.accelerator.is_available() else None, output_device=local_rank if torch.accelerator.is_available() else None)\n"
            ),
            "default": UNCHANGED,
        },
        id="DDP imported under an alias, with device_ids and output_device",
    ),
    pytest.param(
        TORCH + "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])\n",
        {
            "cpu": TORCH + "model = torch.nn.parallel.DistributedDataParallel(model)\n",
            "accelerator": TORCH + "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu] if torch.accelerator.is_available() else None)\n",
            "default": UNCHANGED,
        },
        id="the full name, with device_ids only",
    ),
    pytest.param(
        "import os\n"
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        'local_rank = int(os.environ["LOCAL_RANK"])\n'
        "torch.cuda.set_device(local_rank)\n"
        "model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)\n",
        {
            "npu": (
                "import os\n"
                "import torch\n"
                "import torch_npu\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "torch.npu.set_device(local_rank)\n"
                "model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)\n"
            ),
            "xpu": (
                "import os\n"
                "import torch\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "torch.xpu.set_device(local_rank)\n"
                "model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)\n"
            ),
            "mps": (
                "import os\n"
                "import torch\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank], output_device=local_rank)\n"
            ),
            "cpu": (
                "import os\n"
                "import torch\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "model = DDP(torch.nn.Linear(2, 2))\n"
            ),
            "accelerator": (
                "import os\n"
                "import torch\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                'local_rank = int(os.environ["LOCAL_RANK"])\n'
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.set_device_index(local_rank)\n"
                "model = DDP(torch.nn.Linear(2, 2), device_ids=[local_rank] if torch.accelerator.is_available() else None, output_device=local_rank if torch.accelerator.is_available() else None)\n"
            ),
        },
        id="a LOCAL_RANK index, set as the device first",
    ),
    pytest.param(
        TORCH + (
            "from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "ddp_model = DDP(model, device_ids)\n"
            "other = DDP(model, [0], 0, 1)\n"
        ),
        {
            "cpu": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "ddp_model = DDP(model)\n"
                "other = DDP(model, None, None, 1)\n"
            ),
            "accelerator": TORCH + (
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "ddp_model = DDP(model, device_ids if torch.accelerator.is_available() else None)\n"
                "other = DDP(model, [0] if torch.accelerator.is_available() else None, 0 if torch.accelerator.is_available() else None, 1)\n"
            ),
            "default": UNCHANGED,
        },
        id="device_ids and output_device by position (the DDP tutorial's DDP(model, device_ids)): None where dim follows",
    ),
    pytest.param(
        TORCH + "model = torch.nn.parallel.DistributedDataParallel(*parts)\n",
        {"default": UNCHANGED},
        id="arguments unpacked: where device_ids lands is not known",
    ),
    pytest.param(
        TORCH + (
            "import torch.distributed as dist\n"
            'dist.init_process_group(backend="nccl", device_id=torch.device("cuda", local_rank))\n'
        ),
        {
            "cpu": TORCH + 'import torch.distributed as dist\ndist.init_process_group(backend="gloo")\n',
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(DEVICE_TYPE), "
                "device_id=torch.device(DEVICE_TYPE, local_rank) if torch.accelerator.is_available() else None)\n"
            ),
            "npu": TORCH + (
                "import torch.distributed as dist\nimport torch_npu\n"
                'dist.init_process_group(backend="hccl", device_id=torch.device("npu", local_rank))\n'
            ),
            "xpu": TORCH + (
                "import torch.distributed as dist\n"
                'dist.init_process_group(backend="xccl", device_id=torch.device("xpu", local_rank))\n'
            ),
            "mps": TORCH + 'import torch.distributed as dist\ndist.init_process_group(backend="gloo", device_id=torch.device("mps"))\n',
        },
        id="a process group bound to a device: torch refuses a device_id without an accelerator",
    ),
    pytest.param(
        TORCH + "torch.distributed.init_process_group(device_id=local_rank, backend='nccl')\n",
        {
            "cpu": TORCH + "torch.distributed.init_process_group(backend='gloo')\n",
            "accelerator": TORCH + (
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "torch.distributed.init_process_group(device_id=local_rank if torch.accelerator.is_available() else None, "
                "backend=torch.distributed.get_default_backend_for_device(DEVICE_TYPE))\n"
            ),
            "npu": TORCH + "import torch_npu\ntorch.distributed.init_process_group(device_id=local_rank, backend='hccl')\n",
            "xpu": TORCH + "torch.distributed.init_process_group(device_id=local_rank, backend='xccl')\n",
            "mps": TORCH + "torch.distributed.init_process_group(device_id=local_rank, backend='gloo')\n",
        },
        id="a process group bound to an index, by keyword before the backend",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_ddp_device_ids_only_where_there_is_a_device(source, target, expected):
    assert_migrates(source, target, expected)
