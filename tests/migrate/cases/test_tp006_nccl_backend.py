"""TP006, the NCCL backend (`"nccl"`, `"NCCL"`, `dist.Backend.NCCL`, `is_nccl_available()`) becomes
the target's collective library: hccl, xccl, gloo, or the device's default backend."""

import pytest

from _fixture_cases import TORCH, assert_migrates, per_target

CODE = "TP006"

CASES = [
    pytest.param(
        "import torch.distributed as dist\n"
        'dist.init_process_group("nccl")\n',
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                'dist.init_process_group("hccl")\n'
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                'dist.init_process_group("xccl")\n'
            ),
            "mps": (
                "import torch.distributed as dist\n"
                'dist.init_process_group("gloo")\n'
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                'dist.init_process_group("gloo")\n'
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "dist.init_process_group(torch.distributed.get_default_backend_for_device(DEVICE_TYPE))\n"
            ),
        },
        id='init_process_group("nccl")',
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        "dist.init_process_group(backend=dist.Backend.NCCL, init_method='env://')\n",
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                "dist.init_process_group(backend=\"hccl\", init_method='env://')\n"
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                "dist.init_process_group(backend=\"xccl\", init_method='env://')\n"
            ),
            "mps": (
                "import torch.distributed as dist\n"
                "dist.init_process_group(backend=\"gloo\", init_method='env://')\n"
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                "dist.init_process_group(backend=\"gloo\", init_method='env://')\n"
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(DEVICE_TYPE), init_method='env://')\n"
            ),
        },
        id="dist.Backend.NCCL as a keyword, other arguments kept",
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        'backend = "NCCL" if use_gpu else "gloo"\n'
        "ok = dist.is_nccl_available()\n",
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                'backend = "hccl" if use_gpu else "gloo"\n'
                'ok = dist.is_backend_available("hccl")\n'
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                'backend = "xccl" if use_gpu else "gloo"\n'
                'ok = dist.is_backend_available("xccl")\n'
            ),
            "mps": (
                "import torch.distributed as dist\n"
                'backend = "gloo"\n'
                'ok = dist.is_backend_available("gloo")\n'
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                'backend = "gloo"\n'
                'ok = dist.is_backend_available("gloo")\n'
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                'backend = torch.distributed.get_default_backend_for_device(DEVICE_TYPE) if use_gpu else "gloo"\n'
                "ok = dist.is_backend_available(torch.distributed.get_default_backend_for_device(DEVICE_TYPE))\n"
            ),
        },
        id='"NCCL" in a conditional, and is_nccl_available()',
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        "dist.init_process_group('nccl', init_method='env://')\n",
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                "dist.init_process_group('hccl', init_method='env://')\n"
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                "dist.init_process_group('xccl', init_method='env://')\n"
            ),
            "mps": (
                "import torch.distributed as dist\n"
                "dist.init_process_group('gloo', init_method='env://')\n"
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                "dist.init_process_group('gloo', init_method='env://')\n"
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "dist.init_process_group(torch.distributed.get_default_backend_for_device(DEVICE_TYPE), init_method='env://')\n"
            ),
        },
        id="single quotes, with init_method",
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        'dist.init_process_group(backend="cuda:nccl,cpu:gloo")\n'
        'GLOO_FIRST = "cpu:gloo,cuda:nccl"\n'
        'MESH = "cuda:0"\n',
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                'dist.init_process_group(backend="npu:hccl,cpu:gloo")\n'
                'GLOO_FIRST = "cpu:gloo,npu:hccl"\n'
                'MESH = "npu:0"\n'
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                'dist.init_process_group(backend="xpu:xccl,cpu:gloo")\n'
                'GLOO_FIRST = "cpu:gloo,xpu:xccl"\n'
                'MESH = "xpu:0"\n'
            ),
            "mps": (
                "import torch.distributed as dist\n"
                'dist.init_process_group(backend="gloo")\n'
                'GLOO_FIRST = "gloo"\n'
                'MESH = "mps"\n'
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                'dist.init_process_group(backend="gloo")\n'
                'GLOO_FIRST = "gloo"\n'
                'MESH = "cpu"\n'
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "dist.init_process_group(backend=None)\n"
                'GLOO_FIRST = None\n'
                'MESH = f"{DEVICE_TYPE}:0"\n'
            ),
        },
        id="a backend per device (torchtitan's): the target's pair; gloo serves only the CPU; each device's default on accelerator",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_nccl_becomes_the_targets_backend(source, target, expected):
    assert_migrates(source, target, expected)
