"""TP005, `torch.cuda.amp.*`: the target's own AMP where it has one (npu), else `torch.amp` with the
device type; positional arguments passed by name; stored references bound with functools.partial;
float16 autocast becomes bfloat16 on the CPU, on only where the CPU computes it natively."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, assert_migrates, per_target

CODE = "TP005"

CASES = [
    pytest.param(
        TORCH + (
            "with torch.cuda.amp.autocast():\n"
            "    loss = model(x)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "with torch.npu.amp.autocast():\n"
                "    loss = model(x)\n"
            ),
            "xpu": TORCH + (
                'with torch.amp.autocast("xpu"):\n'
                "    loss = model(x)\n"
            ),
            "mps": TORCH + (
                'with torch.amp.autocast("mps"):\n'
                "    loss = model(x)\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'with torch.amp.autocast("cpu", enabled=CPU_BF16):\n'
                "    loss = model(x)\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "with torch.amp.autocast(DEVICE_TYPE, enabled=AUTOCAST_OK):\n"
                "    loss = model(x)\n"
            ),
        },
        id="torch.cuda.amp.autocast()",
    ),
    pytest.param(
        TORCH + "scaler = torch.cuda.amp.GradScaler(init_scale=1024)\n",
        {
            "npu": TORCH_NPU + "scaler = torch.npu.amp.GradScaler(init_scale=1024)\n",
            "xpu": TORCH + 'scaler = torch.amp.GradScaler("xpu", init_scale=1024)\n',
            "mps": TORCH + 'scaler = torch.amp.GradScaler("mps", init_scale=1024)\n',
            "cpu": TORCH + 'scaler = torch.amp.GradScaler("cpu", init_scale=1024)\n',
            "accelerator": TORCH_DEVICE_TYPE + "scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=1024)\n",
        },
        id="GradScaler with a keyword",
    ),
    pytest.param(
        TORCH + (
            "from torch.cuda.amp import autocast, GradScaler\n"
            "scaler = GradScaler()\n"
            "with autocast(dtype=torch.float16):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "scaler = torch.npu.amp.GradScaler()\n"
                "with torch.npu.amp.autocast(dtype=torch.float16):\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                'scaler = torch.amp.GradScaler("xpu")\n'
                'with torch.amp.autocast("xpu", dtype=torch.float16):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'scaler = torch.amp.GradScaler("mps")\n'
                'with torch.amp.autocast("mps", dtype=torch.float16):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'scaler = torch.amp.GradScaler("cpu")\n'
                'with torch.amp.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "scaler = torch.amp.GradScaler(DEVICE_TYPE)\n"
                'with torch.amp.autocast(DEVICE_TYPE, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16, enabled=AUTOCAST_OK):\n'
                "    pass\n"
            ),
        },
        id="from torch.cuda.amp import autocast, GradScaler, and a float16 dtype",
    ),
    pytest.param(
        "from torch.cuda import amp\n"
        "with amp.autocast():\n"
        "    pass\n",
        {
            "npu": TORCH_NPU + (
                "\n"
                "with torch.npu.amp.autocast():\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                "\n"
                'with torch.amp.autocast("xpu"):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                "\n"
                'with torch.amp.autocast("mps"):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                "\n"
                'with torch.amp.autocast("cpu", enabled=CPU_BF16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "\n"
                "with torch.amp.autocast(DEVICE_TYPE, enabled=AUTOCAST_OK):\n"
                "    pass\n"
            ),
        },
        id="from torch.cuda import amp",
    ),
    pytest.param(
        TORCH + (
            "with torch.cuda.amp.autocast(use_amp):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "with torch.npu.amp.autocast(use_amp):\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                'with torch.amp.autocast("xpu", enabled=use_amp):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'with torch.amp.autocast("mps", enabled=use_amp):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'with torch.amp.autocast("cpu", enabled=use_amp and CPU_BF16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "with torch.amp.autocast(DEVICE_TYPE, enabled=use_amp and AUTOCAST_OK):\n"
                "    pass\n"
            ),
        },
        id="a positional enabled flag is passed by name",
    ),
    pytest.param(
        TORCH + (
            'with torch.autocast("cuda", dtype=torch.float16):\n'
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                'with torch.autocast("npu", dtype=torch.float16):\n'
                "    pass\n"
            ),
            "xpu": TORCH + (
                'with torch.autocast("xpu", dtype=torch.float16):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'with torch.autocast("mps", dtype=torch.float16):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'with torch.autocast("cpu", dtype=torch.bfloat16, enabled=CPU_BF16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                'with torch.autocast(DEVICE_TYPE, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16, enabled=AUTOCAST_OK):\n'
                "    pass\n"
            ),
        },
        id='torch.autocast("cuda", dtype=torch.float16): bfloat16 on the CPU',
    ),
    pytest.param(
        TORCH + "amp_autocast = torch.cuda.amp.autocast\n",
        {
            "npu": TORCH_NPU + "amp_autocast = torch.npu.amp.autocast\n",
            "xpu": (
                "import functools\n"
                "\n"
                "import torch\n"
                'amp_autocast = functools.partial(torch.amp.autocast, "xpu")\n'
            ),
            "mps": (
                "import functools\n"
                "\n"
                "import torch\n"
                'amp_autocast = functools.partial(torch.amp.autocast, "mps")\n'
            ),
            "cpu": (
                "import functools\n"
                "\n"
                "import torch\n"
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'amp_autocast = functools.partial(torch.amp.autocast, "cpu", enabled=CPU_BF16)\n'
            ),
            "accelerator": (
                "import functools\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "amp_autocast = functools.partial(torch.amp.autocast, DEVICE_TYPE, enabled=AUTOCAST_OK)\n"
            ),
        },
        id="a stored reference gets the device bound",
    ),
    pytest.param(
        TORCH + (
            "@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
            "def forward(ctx, x):\n"
            "    return x\n"
        ),
        {
            "npu": TORCH_NPU + (
                "@torch.npu.amp.custom_fwd(cast_inputs=torch.float32)\n"
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "xpu": TORCH + (
                '@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="xpu")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "mps": TORCH + (
                '@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="mps")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "cpu": TORCH + (
                '@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="cpu")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "@torch.amp.custom_fwd(cast_inputs=torch.float32, device_type=DEVICE_TYPE)\n"
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
        },
        id="custom_fwd with cast_inputs",
    ),
    pytest.param(
        TORCH + (
            "@torch.cuda.amp.custom_fwd\n"
            "def forward(ctx, x):\n"
            "    return x\n"
        ),
        {
            "npu": TORCH_NPU + (
                "@torch.npu.amp.custom_fwd\n"
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "xpu": TORCH + (
                '@torch.amp.custom_fwd(device_type="xpu")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "mps": TORCH + (
                '@torch.amp.custom_fwd(device_type="mps")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "cpu": TORCH + (
                '@torch.amp.custom_fwd(device_type="cpu")\n'
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "@torch.amp.custom_fwd(device_type=DEVICE_TYPE)\n"
                "def forward(ctx, x):\n"
                "    return x\n"
            ),
        },
        id="custom_fwd as a bare decorator",
    ),
    pytest.param(
        TORCH + (
            'autocast_fn = getattr(torch.cuda.amp, "autocast")\n'
            "with autocast_fn(enabled=use_amp):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "autocast_fn = torch.npu.amp.autocast\n"
                "with autocast_fn(enabled=use_amp):\n"
                "    pass\n"
            ),
            "xpu": (
                "import functools\n"
                "\n"
                "import torch\n"
                'autocast_fn = functools.partial(torch.amp.autocast, "xpu")\n'
                "with autocast_fn(enabled=use_amp):\n"
                "    pass\n"
            ),
            "mps": (
                "import functools\n"
                "\n"
                "import torch\n"
                'autocast_fn = functools.partial(torch.amp.autocast, "mps")\n'
                "with autocast_fn(enabled=use_amp):\n"
                "    pass\n"
            ),
            "cpu": (
                "import functools\n"
                "\n"
                "import torch\n"
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'autocast_fn = functools.partial(torch.amp.autocast, "cpu", enabled=CPU_BF16)\n'
                "with autocast_fn(enabled=use_amp):\n"
                "    pass\n"
            ),
            "accelerator": (
                "import functools\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "autocast_fn = functools.partial(torch.amp.autocast, DEVICE_TYPE, enabled=AUTOCAST_OK)\n"
                "with autocast_fn(enabled=use_amp):\n"
                "    pass\n"
            ),
        },
        id='getattr(torch.cuda.amp, "autocast"), then called',
    ),
    pytest.param(
        TORCH + (
            "with torch.cuda.amp.autocast(True, torch.float16):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "with torch.npu.amp.autocast(True, torch.float16):\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                'with torch.amp.autocast("xpu", enabled=True, dtype=torch.float16):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                'with torch.amp.autocast("mps", enabled=True, dtype=torch.float16):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'with torch.amp.autocast("cpu", enabled=CPU_BF16, dtype=torch.bfloat16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                'with torch.amp.autocast(DEVICE_TYPE, enabled=AUTOCAST_OK, dtype=torch.float16 if DEVICE_TYPE != "cpu" else torch.bfloat16):\n'
                "    pass\n"
            ),
        },
        id="enabled and dtype passed by position",
    ),
    pytest.param(
        TORCH + (
            "try:\n"
            "    from torch.cuda.amp import GradScaler, autocast\n"
            "except ImportError:\n"
            "    GradScaler = None\n"
            "    autocast = None\n"
            "scaler = GradScaler(2.0**10, enabled=use_amp) if GradScaler is not None else None\n"
            "with autocast(enabled=use_amp):\n"
            "    pass\n"
        ),
        {
            "npu": TORCH_NPU + (
                "try:\n"
                "    from torch.cuda.amp import GradScaler, autocast\n"
                "except ImportError:\n"
                "    GradScaler = None\n"
                "    autocast = None\n"
                "scaler = torch.npu.amp.GradScaler(2.0**10, enabled=use_amp) if torch.npu.amp.GradScaler is not None else None\n"
                "with torch.npu.amp.autocast(enabled=use_amp):\n"
                "    pass\n"
            ),
            "xpu": TORCH + (
                "try:\n"
                "    from torch.cuda.amp import GradScaler, autocast\n"
                "except ImportError:\n"
                "    GradScaler = None\n"
                "    autocast = None\n"
                'scaler = torch.amp.GradScaler("xpu", init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None\n'
                'with torch.amp.autocast("xpu", enabled=use_amp):\n'
                "    pass\n"
            ),
            "mps": TORCH + (
                "try:\n"
                "    from torch.cuda.amp import GradScaler, autocast\n"
                "except ImportError:\n"
                "    GradScaler = None\n"
                "    autocast = None\n"
                'scaler = torch.amp.GradScaler("mps", init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None\n'
                'with torch.amp.autocast("mps", enabled=use_amp):\n'
                "    pass\n"
            ),
            "cpu": TORCH + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                "try:\n"
                "    from torch.cuda.amp import GradScaler, autocast\n"
                "except ImportError:\n"
                "    GradScaler = None\n"
                "    autocast = None\n"
                'scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None\n'
                'with torch.amp.autocast("cpu", enabled=use_amp and CPU_BF16):\n'
                "    pass\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'CPU_BF16 = any(torch.cpu.get_capabilities().get(f, False) for f in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"))\n'
                'AUTOCAST_OK = DEVICE_TYPE != "cpu" or CPU_BF16\n'
                "try:\n"
                "    from torch.cuda.amp import GradScaler, autocast\n"
                "except ImportError:\n"
                "    GradScaler = None\n"
                "    autocast = None\n"
                "scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=2.0**10, enabled=use_amp) if GradScaler is not None else None\n"
                "with torch.amp.autocast(DEVICE_TYPE, enabled=use_amp and AUTOCAST_OK):\n"
                "    pass\n"
            ),
        },
        id="an import kept in a try with a fallback",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_amp_moves_to_the_targets_amp(source, target, expected):
    assert_migrates(source, target, expected)
