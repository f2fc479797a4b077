"""TP101-TP107, advice: rows only, nothing changed: what runs, but slower or less precisely than it
could on the target (float32 steps on the NPU, float64 on MPS, DataParallel, mp.spawn, DDP buffers,
blocking copies in the loop, the launch environment the target's guide recommends)."""

import pytest

from _fixture_cases import TORCH, assert_rows, per_target

CODES = ("TP101", "TP102", "TP103", "TP104", "TP105", "TP106", "TP107")

ROWS = [
    pytest.param(
        TORCH + (
            "for x, y in loader:\n"
            "    loss = model(x).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
        ),
        {
            "npu": [("TP101", 4, "PERFORMANCE"), ("TP107", 4, "PERFORMANCE"), ("TP107", 4, "PERFORMANCE")],
            "default": [],
        },
        id="a float32 training step on npu: mixed precision (TP101), the task queue and the shape remedy (two TP107)",
    ),
    pytest.param(
        TORCH + (
            "for x, y in loader:\n"
            '    with torch.autocast("cuda"):\n'
            "        loss = model(x).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
        ),
        {
            "npu": [("TP107", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE")],
            "default": [],
        },
        id="a step under autocast gets no mixed-precision row (TP101), still the launch rows (TP107)",
    ),
    pytest.param(
        "from lightning.fabric import Fabric\n"
        'fabric = Fabric(accelerator="cuda", precision="bf16-mixed")\n'
        "for x, y in loader:\n"
        "    loss = model(x).sum()\n"
        "    fabric.backward(loss)\n"
        "    optimizer.step()\n",
        {
            "npu": [("TP107", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE")],
            "default": [],
        },
        id="a step whose precision Lightning Fabric sets gets no mixed-precision row (TP101)",
    ),
    pytest.param(
        "import deepspeed\n"
        'engine, optimizer, _, _ = deepspeed.initialize(model=model, config="ds_config.json")\n'
        "for x, y in loader:\n"
        "    loss = engine(x).sum()\n"
        "    engine.backward(loss)\n"
        "    engine.step()\n",
        {
            "npu": [("TP107", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE")],
            "default": [],
        },
        id="a DeepSpeed step, whose precision its config sets, gets no mixed-precision row (TP101)",
    ),
    pytest.param(
        "import os\n"
        "import torch\n"
        'os.environ["TASK_QUEUE_ENABLE"] = "2"\n'
        "for x, y in loader:\n"
        "    loss = model(x).sum()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n",
        {
            "npu": [("TP101", 6, "PERFORMANCE"), ("TP107", 6, "PERFORMANCE")],
            "default": [],
        },
        id="TASK_QUEUE_ENABLE set by the script: only the shape remedy is left (TP107)",
    ),
    pytest.param(
        TORCH + (
            "x = torch.zeros(2, dtype=torch.float64)\n"
            "y = x.double()\n"
            "z = torch.ones(2, dtype=torch.double)\n"
        ),
        {
            "mps": [("TP102", 2, "PRECISION"), ("TP102", 3, "PRECISION"), ("TP102", 4, "PRECISION")],
            "default": [],
        },
        id="float64 on mps: torch.float64, .double(), torch.double (TP102)",
    ),
    pytest.param(
        TORCH + "model = torch.nn.DataParallel(model)\n",
        {
            "default": [("TP103", 2, "PERFORMANCE")],
        },
        id="nn.DataParallel (TP103)",
    ),
    pytest.param(
        "import torch.multiprocessing as mp\n"
        "mp.spawn(worker, args=(2,), nprocs=2)\n",
        {
            "cpu": [],
            "mps": [],  # (one device: no process per device to start)
            "default": [("TP104", 2, "PERFORMANCE")],
        },
        id="mp.spawn on a device target (TP104)",
    ),
    pytest.param(
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "model = DDP(model)\n"
        "model2 = DDP(model, broadcast_buffers=False)\n",
        {
            "default": [("TP105", 2, "PERFORMANCE")],
        },
        id="DDP without broadcast_buffers=False (TP105)",
    ),
    pytest.param(
        TORCH + (
            "for x, y in loader:\n"
            "    x = x.to(device)\n"
            "    loss = model(x).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
        ),
        {
            "npu": [("TP101", 5, "PERFORMANCE"), ("TP106", 3, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE")],
            "cpu": [],
            "default": [("TP106", 3, "PERFORMANCE")],
        },
        id="a blocking copy in the training loop (TP106)",
    ),
    pytest.param(
        TORCH + (
            "for x, y in loader:\n"
            "    x = x.to(device, non_blocking=True)\n"
            "    loss = model(x).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
        ),
        {
            "npu": [("TP101", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE"), ("TP107", 5, "PERFORMANCE")],
            "default": [],
        },
        id="a non_blocking copy gets no row (TP106)",
    ),
]


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_advice_is_a_row_at_its_line(source, target, rows):
    assert_rows(source, target, rows, CODES)


def test_on_a_one_device_target_dataparallel_advice_says_to_drop_it_not_to_start_processes():
    from torchport import targets
    from torchport.migrate import migrate_source

    result = migrate_source((TORCH + "model = torch.nn.DataParallel(model)\n").encode(), targets.get("mps"), "m.py")
    [row] = [f for f in result.findings if f.code == "TP103"]
    assert "one device" in row.message and "drop it" in row.message and "process per device" not in row.message


PINNED_LOADER = TORCH + (
    "def train(model, data, optimizer, device):\n"
    "    for x in loader:\n"
    "        model(x.to(device)).sum().backward()\n"
    "        optimizer.step()\n"
    "\n"
    "\n"
    "def build(data):\n"  # (after the loop, and in a function that never mentions CUDA)
    "    return torch.utils.data.DataLoader(data, batch_size=8, pin_memory={pin})\n"
)


@pytest.mark.parametrize("pin, advised", [("True", False), ("args.pin", False), ("False", True)])
def test_pin_memory_is_advised_only_where_no_loader_pins_already(pin, advised):
    from torchport import targets
    from torchport.migrate import migrate_source

    result = migrate_source(PINNED_LOADER.format(pin=pin).encode(), targets.get("npu"), "train.py")
    [row] = [f for f in result.findings if f.code == "TP106"]
    assert ("pin_memory=True" in row.message) is advised, row.message
    assert "non_blocking=True" in row.message
