"""TP006, the NCCL backend (`"nccl"`, `"NCCL"`, `dist.Backend.NCCL`, `is_nccl_available()`) becomes
the target's collective library: hccl, xccl, gloo, or the device's default backend, where it is asked
for; where it says what a value is (compared, matched, a key) it is kept, and a note says so."""

import pytest

from _fixture_cases import TORCH, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP006"

DIST = "import torch.distributed as dist\n"
TORCH_NPU_AFTER_DIST = DIST + "import torch_npu\n"
OPTIONS = DIST + ("dist.init_process_group(backend=args.dist_backend, world_size=1, rank=0)\n"
                  "dist.new_group(ranks, backend=cfg.backend)\n"
                  "ring = dist.new_group(args.ranks)\n")  # (new_group's first place is its ranks)


def _from_options(backend: str) -> str:
    return (f'dist.init_process_group(backend={{"nccl": {backend}}}.get(args.dist_backend, args.dist_backend), '
            "world_size=1, rank=0)\n"
            f'dist.new_group(ranks, backend={{"nccl": {backend}}}.get(cfg.backend, cfg.backend))\n'
            "ring = dist.new_group(args.ranks)\n")

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
        OPTIONS,
        {"npu": TORCH_NPU_AFTER_DIST + _from_options('"hccl"'), "xpu": DIST + _from_options('"xccl"'),
         "mps": DIST + _from_options('"gloo"'), "cpu": DIST + _from_options('"gloo"'),
         "accelerator": TORCH + DIST + 'DEVICE_TYPE = torch.accelerator.current_accelerator().type if '
                        'torch.accelerator.is_available() else "cpu"\n'
                        + _from_options("torch.distributed.get_default_backend_for_device(DEVICE_TYPE)")},
        id="a backend read from the options: nccl named on the command line becomes the target's",
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
    pytest.param(
        "import torch.distributed as dist\n"
        'pg_type = "nccl"\n'
        'if pg_type == "nccl":\n'
        "    pg = ProcessGroupNCCL()\n"
        'elif pg_type == "gloo":\n'
        "    pg = ProcessGroupGloo()\n",
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                'pg_type = "hccl"\n'
                'if pg_type == "nccl":\n'
                "    pg = ProcessGroupNCCL()\n"
                'elif pg_type == "gloo":\n'
                "    pg = ProcessGroupGloo()\n"
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                'pg_type = "gloo"\n'
                'if pg_type == "nccl":\n'
                "    pg = ProcessGroupNCCL()\n"
                'elif pg_type == "gloo":\n'
                "    pg = ProcessGroupGloo()\n"
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "pg_type = torch.distributed.get_default_backend_for_device(DEVICE_TYPE)\n"
                'if pg_type == "nccl":\n'
                "    pg = ProcessGroupNCCL()\n"
                'elif pg_type == "gloo":\n'
                "    pg = ProcessGroupGloo()\n"
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                'pg_type = "xccl"\n'
                'if pg_type == "nccl":\n'
                "    pg = ProcessGroupNCCL()\n"
                'elif pg_type == "gloo":\n'
                "    pg = ProcessGroupGloo()\n"
            ),
            "mps": (
                "import torch.distributed as dist\n"
                'pg_type = "gloo"\n'
                'if pg_type == "nccl":\n'
                "    pg = ProcessGroupNCCL()\n"
                'elif pg_type == "gloo":\n'
                "    pg = ProcessGroupGloo()\n"
            ),
        },
        id="compared with \"nccl\" (torchft's manager picks a process group class): kept, the value assigned replaced",
    ),
    pytest.param(
        "def group_class(kind, backend):\n"
        "    match kind:\n"
        '        case "nccl" | "NCCL":\n'
        "            return ProcessGroupNCCL\n"
        '    if backend in ("nccl", "cuda:nccl,cpu:gloo") or "nccl" != backend:\n'
        "        return None\n",
        {"default": UNCHANGED},
        id="a case pattern, a membership test, a backend per device in a tuple tested: kept on every target",
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
        'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
        'options = {"backend": "nccl"}\n',
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
                'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
                'options = {"backend": "hccl"}\n'
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
                'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
                'options = {"backend": "gloo"}\n'
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
                'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
                'options = {"backend": torch.distributed.get_default_backend_for_device(DEVICE_TYPE)}\n'
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
                'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
                'options = {"backend": "xccl"}\n'
            ),
            "mps": (
                "import torch.distributed as dist\n"
                'GROUPS = {"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}\n'
                'pg = GROUPS["nccl"] if dist.Backend.NCCL == args.backend else GROUPS.get("nccl")\n'
                'options = {"backend": "gloo"}\n'
            ),
        },
        id="keys of a lookup (the dict's, a subscript's, .get's) and dist.Backend.NCCL compared: kept; a dict's value replaced",
    ),
    pytest.param(
        "import torch.distributed as dist\n"
        "if dist.get_backend() == 'nccl':\n"
        "    pass\n",
        {
            "npu": (
                "import torch.distributed as dist\n"
                "import torch_npu\n"
                "if dist.get_backend() == 'hccl':\n"
                "    pass\n"
            ),
            "cpu": (
                "import torch.distributed as dist\n"
                "if dist.get_backend() == 'gloo':\n"
                "    pass\n"
            ),
            "accelerator": TORCH + (
                "import torch.distributed as dist\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "if dist.get_backend() == torch.distributed.get_default_backend_for_device(DEVICE_TYPE):\n"
                "    pass\n"
            ),
            "xpu": (
                "import torch.distributed as dist\n"
                "if dist.get_backend() == 'xccl':\n"
                "    pass\n"
            ),
            "mps": (
                "import torch.distributed as dist\n"
                "if dist.get_backend() == 'gloo':\n"
                "    pass\n"
            ),
        },
        id="compared with dist.get_backend(), the group this file made: the target's backend",
    ),
]

ROWS = [
    pytest.param(
        'if pg_type == "nccl":\n'
        "    pg = ProcessGroupNCCL()\n"
        'GROUPS = {"nccl": ProcessGroupNCCL}\n',
        {"default": [("TP006", 1, "NOTE"), ("TP006", 3, "NOTE")]},
        id="each backend kept as it is has a note",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_nccl_becomes_the_targets_backend(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_a_backend_kept_as_it_is_is_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
