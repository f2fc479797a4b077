"""TP004, `torch.cuda.<api>`, however it was imported, as the target's verdict says: same (renamed),
adapted (guarded where the target may have no device), no-op (dropped, or its value used),
unsupported and unknown (left, and reported)."""

import pytest

from _fixture_cases import TORCH, TORCH_DEVICE_TYPE, TORCH_NPU, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP004"

CASES = [
    pytest.param(
        TORCH + "torch.cuda.synchronize()\n",
        {
            "npu": TORCH_NPU + "torch.npu.synchronize()\n",
            "xpu": TORCH + "torch.xpu.synchronize()\n",
            "mps": TORCH + "torch.mps.synchronize()\n",
            "cpu": "import torch\n",
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()\n"
            ),
        },
        id="torch.cuda.synchronize(): same, dropped on the CPU, guarded on accelerator",
    ),
    pytest.param(
        "import torch.cuda as tc\n"
        "tc.synchronize()\n",
        {
            "npu": TORCH_NPU + (
                "\n"
                "torch.npu.synchronize()\n"
            ),
            "xpu": TORCH + (
                "\n"
                "torch.xpu.synchronize()\n"
            ),
            "mps": TORCH + (
                "\n"
                "torch.mps.synchronize()\n"
            ),
            "cpu": "\n",
            "accelerator": TORCH + (
                "\n"
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()\n"
            ),
        },
        id="import torch.cuda as tc",
    ),
    pytest.param(
        "from torch import cuda\n"
        "n = cuda.device_count()\n",
        {
            "npu": TORCH_NPU + (
                "\n"
                "n = torch.npu.device_count()\n"
            ),
            "xpu": TORCH + (
                "\n"
                "n = torch.xpu.device_count()\n"
            ),
            "mps": TORCH + (
                "\n"
                "n = torch.mps.device_count()\n"
            ),
            "cpu": (
                "import os\n"
                "\n"
                "\n"
                "def host_device_count():\n"
                '    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""\n'
                '    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))\n'
                "\n"
                "\n"
                "n = host_device_count()\n"
            ),
            "accelerator": (
                "import os\n"
                "import torch\n"
                "\n"
                "\n"
                "def host_device_count():\n"
                '    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""\n'
                '    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))\n'
                "\n"
                "\n"
                "n = (torch.accelerator.device_count() if torch.accelerator.is_available() else host_device_count())\n"
            ),
        },
        id="from torch import cuda",
    ),
    pytest.param(
        "from torch.cuda import synchronize, empty_cache\n"
        "synchronize()\n"
        "empty_cache()\n",
        {
            "npu": TORCH_NPU + (
                "\n"
                "torch.npu.synchronize()\n"
                "torch.npu.empty_cache()\n"
            ),
            "xpu": TORCH + (
                "\n"
                "torch.xpu.synchronize()\n"
                "torch.xpu.empty_cache()\n"
            ),
            "mps": TORCH + (
                "\n"
                "torch.mps.synchronize()\n"
                "torch.mps.empty_cache()\n"
            ),
            "cpu": "\n",
            "accelerator": TORCH + (
                "\n"
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()\n"
                "    torch.accelerator.empty_cache()\n"
            ),
        },
        id="names imported from torch.cuda",
    ),
    pytest.param(
        TORCH + (
            "CD = torch.cuda\n"
            "CD.synchronize()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "CD = torch.npu\n"
                "torch.npu.synchronize()\n"
            ),
            "xpu": TORCH + (
                "CD = torch.xpu\n"
                "torch.xpu.synchronize()\n"
            ),
            "mps": TORCH + (
                "CD = torch.mps\n"
                "torch.mps.synchronize()\n"
            ),
            "cpu": TORCH + "CD = torch.cpu\n",
            "accelerator": TORCH_DEVICE_TYPE + (
                "CD = torch.get_device_module(DEVICE_TYPE)\n"
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()\n"
            ),
        },
        id="a module alias assigned in the script",
    ),
    pytest.param(
        TORCH + (
            "torch.cuda.empty_cache()\n"
            "peak = torch.cuda.max_memory_allocated() / 2**20\n"
        ),
        {
            "npu": TORCH_NPU + (
                "torch.npu.empty_cache()\n"
                "peak = torch.npu.max_memory_allocated() / 2**20\n"
            ),
            "xpu": TORCH + (
                "torch.xpu.empty_cache()\n"
                "peak = torch.xpu.max_memory_allocated() / 2**20\n"
            ),
            "mps": TORCH + (
                "torch.mps.empty_cache()\n"
                "peak = 0.0\n"
            ),
            "cpu": TORCH + "peak = 0.0\n",
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.empty_cache()\n"
                "peak = (torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 2**20\n"
            ),
        },
        id="a no-op whose value is used becomes the value",
    ),
    pytest.param(
        TORCH + (
            "if torch.cuda.is_available():\n"
            "    torch.cuda.synchronize()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "if torch.npu.is_available():\n"
                "    torch.npu.synchronize()\n"
            ),
            "xpu": TORCH + (
                "if torch.xpu.is_available():\n"
                "    torch.xpu.synchronize()\n"
            ),
            "mps": TORCH + (
                "if torch.backends.mps.is_available():\n"
                "    torch.mps.synchronize()\n"
            ),
            "cpu": "import torch\n",
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.synchronize()\n"
            ),
        },
        id="a call under the script's own availability test is not guarded again",
    ),
    pytest.param(
        TORCH + (
            "torch.cuda.set_device(local_rank)\n"
            "name = torch.cuda.get_device_name(0)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "torch.npu.set_device(local_rank)\n"
                "name = torch.npu.get_device_name(0)\n"
            ),
            "xpu": TORCH + (
                "torch.xpu.set_device(local_rank)\n"
                "name = torch.xpu.get_device_name(0)\n"
            ),
            "mps": (
                "import platform\n"
                "\n"
                "import torch\n"
                "name = platform.processor()\n"
            ),
            "cpu": (
                "import platform\n"
                "\n"
                "import torch\n"
                "name = platform.processor()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.set_device_index(local_rank)\n"
                "name = DEVICE_TYPE\n"
            ),
        },
        id="set_device and get_device_name",
    ),
    pytest.param(
        TORCH + "torch.cuda.manual_seed_all(0)\n",
        {
            "npu": TORCH_NPU + "torch.npu.manual_seed_all(0)\n",
            "xpu": TORCH + "torch.xpu.manual_seed_all(0)\n",
            "mps": TORCH + "torch.manual_seed(0)\n",
            "cpu": TORCH + "torch.manual_seed(0)\n",
            "accelerator": TORCH + "torch.manual_seed(0)\n",
        },
        id="a seeding call alone",
    ),
    pytest.param(
        TORCH + (
            "torch.manual_seed(7)\n"
            "torch.cuda.manual_seed_all(7)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "torch.manual_seed(7)\n"
                "torch.npu.manual_seed_all(7)\n"
            ),
            "xpu": TORCH + (
                "torch.manual_seed(7)\n"
                "torch.xpu.manual_seed_all(7)\n"
            ),
            "mps": TORCH + "torch.manual_seed(7)\n",
            "cpu": TORCH + "torch.manual_seed(7)\n",
            "accelerator": TORCH + "torch.manual_seed(7)\n",
        },
        id="a seeding call that repeats its neighbour once rewritten goes",
    ),
    pytest.param(
        TORCH + (
            "try:\n"
            "    loss = step()\n"
            "except torch.cuda.OutOfMemoryError:\n"
            "    loss = None\n"
        ),
        {
            "npu": TORCH_NPU + (
                "try:\n"
                "    loss = step()\n"
                "except torch.OutOfMemoryError:\n"
                "    loss = None\n"
            ),
            "xpu": TORCH + (
                "try:\n"
                "    loss = step()\n"
                "except torch.OutOfMemoryError:\n"
                "    loss = None\n"
            ),
            "mps": TORCH + (
                "try:\n"
                "    loss = step()\n"
                "except torch.OutOfMemoryError:\n"
                "    loss = None\n"
            ),
            "cpu": TORCH + (
                "try:\n"
                "    loss = step()\n"
                "except torch.OutOfMemoryError:\n"
                "    loss = None\n"
            ),
            "accelerator": TORCH + (
                "try:\n"
                "    loss = step()\n"
                "except torch.OutOfMemoryError:\n"
                "    loss = None\n"
            ),
        },
        id="torch.cuda.OutOfMemoryError is torch.OutOfMemoryError",
    ),
    pytest.param(
        TORCH + "graphed = torch.cuda.make_graphed_callables(model, (x,))\n",
        {
            "npu": TORCH_NPU + "graphed = torch.npu.make_graphed_callables(model, (x,))\n",
            "xpu": TORCH + "graphed = torch.xpu.make_graphed_callables(model, (x,))\n",
            "default": UNCHANGED,
        },
        id="unsupported where the target lacks it: left as is",
    ),
    pytest.param(
        TORCH + "x = torch.cuda.some_made_up_api()\n",
        {
            "default": UNCHANGED,
        },
        id="a name torch.cuda does not have: left as is",
    ),
    pytest.param(
        TORCH + 'loader_kwargs = {"pin_memory": torch.cuda.is_available()}\n',
        {
            "npu": TORCH_NPU + 'loader_kwargs = {"pin_memory": torch.npu.is_available()}\n',
            "xpu": TORCH + 'loader_kwargs = {"pin_memory": torch.xpu.is_available()}\n',
            "mps": TORCH + 'loader_kwargs = {"pin_memory": torch.backends.mps.is_available()}\n',
            "cpu": TORCH + 'loader_kwargs = {"pin_memory": torch.cpu.is_available()}\n',
            "accelerator": TORCH + 'loader_kwargs = {"pin_memory": torch.accelerator.is_available()}\n',
        },
        id="an availability test's value used as a flag",
    ),
    pytest.param(
        TORCH + (
            "with torch.cuda.device(1):\n"
            "    x = torch.ones(2).cuda()\n"
            "with torch.cuda.device(x.device):\n"
            "    y = x * 2\n"
        ),
        {
            "npu": TORCH_NPU + (
                "with torch.npu.device(1):\n"
                "    x = torch.ones(2).npu()\n"
                "with torch.npu.device(x.device):\n"
                "    y = x * 2\n"
            ),
            "xpu": TORCH + (
                "with torch.xpu.device(1):\n"
                "    x = torch.ones(2).xpu()\n"
                "with torch.xpu.device(x.device):\n"
                "    y = x * 2\n"
            ),
            "mps": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                '    x = torch.ones(2).to("mps")\n'
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "cpu": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                "    x = torch.ones(2).cpu()\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "accelerator": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "with (torch.accelerator.device_index(1) if torch.accelerator.is_available() else contextlib.nullcontext()):\n"
                "    x = torch.ones(2).to(DEVICE_TYPE)\n"
                "with (torch.accelerator.device_index(torch.device(x.device).index) if torch.accelerator.is_available() else contextlib.nullcontext()):\n"
                "    y = x * 2\n"
            ),
        },
        id="torch.cuda.device(i) and torch.cuda.device(x.device) as contexts",
    ),
    pytest.param(
        TORCH + (
            "torch.cuda.memory.empty_cache()\n"
            "state = torch.cuda.random.get_rng_state()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "torch.npu.empty_cache()\n"
                "state = torch.npu.get_rng_state()\n"
            ),
            "xpu": TORCH + (
                "torch.xpu.empty_cache()\n"
                "state = torch.xpu.get_rng_state()\n"
            ),
            "mps": TORCH + (
                "torch.mps.empty_cache()\n"
                "state = torch.mps.get_rng_state()\n"
            ),
            "cpu": TORCH + "state = torch.get_rng_state()\n",
            "accelerator": TORCH + (
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.empty_cache()\n"
                "state = torch.get_rng_state()\n"
            ),
        },
        id="APIs reached through torch.cuda.memory and torch.cuda.random",
    ),
    pytest.param(
        TORCH + (
            'state["cuda_rng"] = torch.cuda.get_rng_state_all()\n'
            'torch.cuda.set_rng_state_all(state["cuda_rng"])\n'
        ),
        {
            "npu": TORCH_NPU + (
                'state["cuda_rng"] = torch.npu.get_rng_state_all()\n'
                'torch.npu.set_rng_state_all(state["cuda_rng"])\n'
            ),
            "xpu": TORCH + (
                'state["cuda_rng"] = torch.xpu.get_rng_state_all()\n'
                'torch.xpu.set_rng_state_all(state["cuda_rng"])\n'
            ),
            "mps": UNCHANGED,
            "cpu": TORCH + (
                "\n"
                "\n"
                "def host_get_rng_state_all():\n"
                '    """torch.cuda.get_rng_state_all() where the CPU stands in for the GPUs: its one generator\'s state, in a list."""\n'
                "    return [torch.get_rng_state()]\n"
                "\n"
                "\n"
                "def host_set_rng_state_all(new_states):\n"
                '    """torch.cuda.set_rng_state_all(states) where the CPU stands in for the GPUs: the first state is its generator\'s."""\n'
                "    for state in new_states[:1]:\n"
                "        torch.set_rng_state(state)\n"
                "\n"
                "\n"
                'state["cuda_rng"] = host_get_rng_state_all()\n'
                'host_set_rng_state_all(state["cuda_rng"])\n'
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "\n"
                "\n"
                "def device_get_rng_state_all():\n"
                '    """torch.cuda.get_rng_state_all() on DEVICE_TYPE (torch.mps and torch.cpu have one generator: its state, in a list)."""\n'
                "    module = torch.get_device_module(DEVICE_TYPE)\n"
                '    if hasattr(module, "get_rng_state_all"):\n'
                "        return module.get_rng_state_all()\n"
                '    return [getattr(module, "get_rng_state", torch.get_rng_state)()]\n'
                "\n"
                "\n"
                "def device_set_rng_state_all(new_states):\n"
                '    """torch.cuda.set_rng_state_all(states) on DEVICE_TYPE (torch.mps and torch.cpu have one generator: the first state)."""\n'
                "    module = torch.get_device_module(DEVICE_TYPE)\n"
                '    if hasattr(module, "set_rng_state_all"):\n'
                "        return module.set_rng_state_all(new_states)\n"
                "    for state in new_states[:1]:\n"
                '        getattr(module, "set_rng_state", torch.set_rng_state)(state)\n'
                "\n"
                "\n"
                'state["cuda_rng"] = device_get_rng_state_all()\n'
                'device_set_rng_state_all(state["cuda_rng"])\n'
            ),
        },
        id="every GPU's generator state in a checkpoint: the CPU's one, in a list, on cpu; the device type's module's on accelerator",
    ),
    pytest.param(
        TORCH + (
            "props = torch.cuda.get_device_properties(0)\n"
            "free, total = torch.cuda.mem_get_info()\n"
            "major, minor = torch.cuda.get_device_capability()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "props = torch.npu.get_device_properties(0)\n"
                "free, total = torch.npu.mem_get_info()\n"
                "major, minor = (torch.npu.get_device_capability() or (0, 0))\n"
            ),
            "xpu": TORCH + (
                "props = torch.xpu.get_device_properties(0)\n"
                "free, total = torch.xpu.mem_get_info()\n"
                "major, minor = (0, 0)\n"
            ),
            "mps": (
                "import os\n"
                "import platform\n"
                "import types\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "def host_properties():\n"
                '    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""\n'
                '    if os.name == "nt":  # Windows\n'
                "        import ctypes\n"
                "\n"
                "        kilobytes = ctypes.c_ulonglong()\n"
                "        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))\n"
                "        memory = kilobytes.value * 1024\n"
                "    else:  # Linux, macOS\n"
                '        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")\n'
                "    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,\n"
                "                                 total_memory=memory, multi_processor_count=os.cpu_count(),\n"
                "                                 uuid=f\"host-{platform.node()}\")\n"
                "\n"
                "\n"
                "def host_memory_info():\n"
                "    \"\"\"(free, total) bytes of the host's memory, as CUDA's mem_get_info() gives them for a GPU.\"\"\"\n"
                '    counts = getattr(os, "sysconf_names", {})\n'
                '    if "SC_PHYS_PAGES" not in counts:\n'
                "        return 0, 0\n"
                '    page = os.sysconf("SC_PAGE_SIZE")\n'
                '    total = page * os.sysconf("SC_PHYS_PAGES")\n'
                '    return (page * os.sysconf("SC_AVPHYS_PAGES") if "SC_AVPHYS_PAGES" in counts else total), total\n'
                "\n"
                "\n"
                "props = host_properties()\n"
                "free, total = host_memory_info()\n"
                "major, minor = (0, 0)\n"
            ),
            "cpu": (
                "import os\n"
                "import platform\n"
                "import types\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "def host_properties():\n"
                '    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""\n'
                '    if os.name == "nt":  # Windows\n'
                "        import ctypes\n"
                "\n"
                "        kilobytes = ctypes.c_ulonglong()\n"
                "        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))\n"
                "        memory = kilobytes.value * 1024\n"
                "    else:  # Linux, macOS\n"
                '        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")\n'
                "    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,\n"
                "                                 total_memory=memory, multi_processor_count=os.cpu_count(),\n"
                "                                 uuid=f\"host-{platform.node()}\")\n"
                "\n"
                "\n"
                "def host_memory_info():\n"
                "    \"\"\"(free, total) bytes of the host's memory, as CUDA's mem_get_info() gives them for a GPU.\"\"\"\n"
                '    counts = getattr(os, "sysconf_names", {})\n'
                '    if "SC_PHYS_PAGES" not in counts:\n'
                "        return 0, 0\n"
                '    page = os.sysconf("SC_PAGE_SIZE")\n'
                '    total = page * os.sysconf("SC_PHYS_PAGES")\n'
                '    return (page * os.sysconf("SC_AVPHYS_PAGES") if "SC_AVPHYS_PAGES" in counts else total), total\n'
                "\n"
                "\n"
                "props = host_properties()\n"
                "free, total = host_memory_info()\n"
                "major, minor = (0, 0)\n"
            ),
            "accelerator": (
                "import os\n"
                "import platform\n"
                "import types\n"
                "\n"
                "import torch\n"
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "\n"
                "\n"
                "def host_properties():\n"
                '    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""\n'
                '    if os.name == "nt":  # Windows\n'
                "        import ctypes\n"
                "\n"
                "        kilobytes = ctypes.c_ulonglong()\n"
                "        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))\n"
                "        memory = kilobytes.value * 1024\n"
                "    else:  # Linux, macOS\n"
                '        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")\n'
                "    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,\n"
                "                                 total_memory=memory, multi_processor_count=os.cpu_count(),\n"
                "                                 uuid=f\"host-{platform.node()}\")\n"
                "\n"
                "\n"
                "def host_memory_info():\n"
                "    \"\"\"(free, total) bytes of the host's memory, as CUDA's mem_get_info() gives them for a GPU.\"\"\"\n"
                '    counts = getattr(os, "sysconf_names", {})\n'
                '    if "SC_PHYS_PAGES" not in counts:\n'
                "        return 0, 0\n"
                '    page = os.sysconf("SC_PAGE_SIZE")\n'
                '    total = page * os.sysconf("SC_PHYS_PAGES")\n'
                '    return (page * os.sysconf("SC_AVPHYS_PAGES") if "SC_AVPHYS_PAGES" in counts else total), total\n'
                "\n"
                "\n"
                "props = (torch.get_device_module(DEVICE_TYPE).get_device_properties(0) if torch.accelerator.is_available() else host_properties())\n"
                "free, total = (torch.accelerator.get_memory_info() if torch.accelerator.is_available() else host_memory_info())\n"
                "major, minor = (torch.get_device_module(DEVICE_TYPE).get_device_capability() "
                "if (torch.version.cuda or torch.version.hip) is not None and torch.accelerator.is_available() else (0, 0))\n"
            ),
        },
        id="properties, memory info and capability: the host's answer where there is no device; (0, 0) where the "
           "capability is no (major, minor): torch_npu's None, torch.xpu's and torch.accelerator's dict",
    ),
    pytest.param(
        TORCH + (
            "g = torch.cuda.CUDAGraph()\n"
            "with torch.cuda.graph(g):\n"
            "    y = model(x)\n"
            "g.replay()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "g = torch.npu.NPUGraph()\n"
                "with torch.npu.graph(g):\n"
                "    y = model(x)\n"
                "g.replay()\n"
            ),
            "xpu": TORCH + (
                "g = torch.xpu.XPUGraph()\n"
                "with torch.xpu.graph(g):\n"
                "    y = model(x)\n"
                "g.replay()\n"
            ),
            "default": UNCHANGED,
        },
        id="CUDA graphs: renamed where the target has them, else left",
    ),
    pytest.param(
        TORCH + (
            'torch.set_default_tensor_type("torch.cuda.FloatTensor")\n'
            "torch.set_default_tensor_type(torch.cuda.HalfTensor)\n"
            "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n"
        ),
        {
            "npu": TORCH_NPU + (
                'torch.set_default_tensor_type("torch.npu.FloatTensor")\n'
                "torch.set_default_tensor_type(torch.npu.HalfTensor)\n"
                "torch.set_default_tensor_type(torch.npu.FloatTensor)\n"
            ),
            "xpu": TORCH + (
                'torch.set_default_device("xpu")\n'
                "torch.set_default_tensor_type(torch.cuda.HalfTensor)\n"
                'torch.set_default_device("xpu")\n'
            ),
            "mps": TORCH + (
                'torch.set_default_device("mps")\n'
                "torch.set_default_tensor_type(torch.cuda.HalfTensor)\n"
                'torch.set_default_device("mps")\n'
            ),
            "cpu": TORCH + (
                'torch.set_default_tensor_type("torch.FloatTensor")\n'
                "torch.set_default_tensor_type(torch.HalfTensor)\n"
                "torch.set_default_tensor_type(torch.FloatTensor)\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'TENSOR_TYPES = torch.get_device_module(DEVICE_TYPE) if hasattr(torch.get_device_module(DEVICE_TYPE), "FloatTensor") else torch\n'
                "torch.set_default_device(DEVICE_TYPE)\n"
                "torch.set_default_tensor_type(TENSOR_TYPES.HalfTensor)\n"
                "torch.set_default_device(DEVICE_TYPE)\n"
            ),
        },
        id="set_default_tensor_type with a CUDA type, by name and by class",
    ),
    pytest.param(
        TORCH + (
            "x = 1; torch.cuda.synchronize()\n"
            "for i in range(2):\n"
            "    # wait for the device\n"
            "    torch.cuda.synchronize()\n"
            "# free memory before evaluating\n"
            "torch.cuda.empty_cache()\n"
            'print("done")\n'
        ),
        {
            "npu": TORCH_NPU + (
                "x = 1; torch.npu.synchronize()\n"
                "for i in range(2):\n"
                "    # wait for the device\n"
                "    torch.npu.synchronize()\n"
                "# free memory before evaluating\n"
                "torch.npu.empty_cache()\n"
                'print("done")\n'
            ),
            "xpu": TORCH + (
                "x = 1; torch.xpu.synchronize()\n"
                "for i in range(2):\n"
                "    # wait for the device\n"
                "    torch.xpu.synchronize()\n"
                "# free memory before evaluating\n"
                "torch.xpu.empty_cache()\n"
                'print("done")\n'
            ),
            "mps": TORCH + (
                "x = 1; torch.mps.synchronize()\n"
                "for i in range(2):\n"
                "    # wait for the device\n"
                "    torch.mps.synchronize()\n"
                "# free memory before evaluating\n"
                "torch.mps.empty_cache()\n"
                'print("done")\n'
            ),
            "cpu": TORCH + (
                "x = 1\n"
                "for i in range(2):\n"
                "    # wait for the device\n"
                "    pass\n"
                "# free memory before evaluating\n"
                'print("done")\n'
            ),
            "accelerator": TORCH + (
                "x = 1; (torch.accelerator.synchronize() if torch.accelerator.is_available() else None)\n"
                "for i in range(2):\n"
                "    # wait for the device\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "# free memory before evaluating\n"
                "if torch.accelerator.is_available():\n"
                "    torch.accelerator.empty_cache()\n"
                'print("done")\n'
            ),
        },
        id="dropped calls: beside another statement, alone in a loop, under a comment",
    ),
    pytest.param(
        TORCH + (
            "mod = torch.cuda if torch.cuda.is_available() else torch.cpu\n"
            "mod.synchronize()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "mod = torch.npu if torch.npu.is_available() else torch.cpu\n"
                "mod.synchronize()\n"
            ),
            "xpu": TORCH + (
                "mod = torch.xpu if torch.xpu.is_available() else torch.cpu\n"
                "mod.synchronize()\n"
            ),
            "mps": TORCH + (
                "mod = torch.mps if torch.backends.mps.is_available() else torch.cpu\n"
                "mod.synchronize()\n"
            ),
            "cpu": TORCH + (
                "mod = torch.cpu\n"
                "mod.synchronize()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "mod = torch.get_device_module(DEVICE_TYPE) if torch.accelerator.is_available() else torch.cpu\n"
                "mod.synchronize()\n"
            ),
        },
        id="a module chosen by an availability test",
    ),
    pytest.param(
        TORCH + (
            "CD = torch.cuda\n"
            "free = CD.memory_allocated()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "CD = torch.npu\n"
                "free = torch.npu.memory_allocated()\n"
            ),
            "xpu": TORCH + (
                "CD = torch.xpu\n"
                "free = torch.xpu.memory_allocated()\n"
            ),
            "mps": TORCH + (
                "CD = torch.mps\n"
                "free = torch.mps.current_allocated_memory()\n"
            ),
            "cpu": TORCH + (
                "CD = torch.cpu\n"
                "free = 0\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                "CD = torch.get_device_module(DEVICE_TYPE)\n"
                "free = (torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0)\n"
            ),
        },
        id="a memory statistic through a module alias",
    ),
    pytest.param(
        TORCH + (
            'torch.cuda.nvtx.range_push("step")\n'
            'with torch.cuda.nvtx.range("forward"):\n'
            "    y = x * 2\n"
            "torch.cuda.nvtx.range_pop()\n"
        ),
        {
            "npu": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "import torch_npu\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "xpu": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "mps": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "cpu": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
            "accelerator": (
                "import contextlib\n"
                "\n"
                "import torch\n"
                "with contextlib.nullcontext():\n"
                "    y = x * 2\n"
            ),
        },
        id="nvtx ranges: annotations only CUDA records",
    ),
    pytest.param(
        TORCH + (
            "torch.cuda.memory._record_memory_history(max_entries=100000)\n"
            "train()\n"
            'torch.cuda.memory._dump_snapshot(f"{folder}/snapshot.pickle")\n'
            "snapshot = torch.cuda.memory._snapshot()\n"
        ),
        {
            "npu": TORCH_NPU + (
                "torch.npu.memory._record_memory_history(max_entries=100000)\n"
                "train()\n"
                'torch.npu.memory._dump_snapshot(f"{folder}/snapshot.pickle")\n'
                "snapshot = torch.npu.memory._snapshot()\n"
            ),
            "xpu": TORCH + (
                "torch.xpu.memory._record_memory_history(max_entries=100000)\n"
                "train()\n"
                'torch.xpu.memory._dump_snapshot(f"{folder}/snapshot.pickle")\n'
                "snapshot = torch.xpu.memory._snapshot()\n"
            ),
            "accelerator": TORCH_DEVICE_TYPE + (
                'if hasattr(torch.get_device_module(DEVICE_TYPE), "memory"):\n'
                "    torch.get_device_module(DEVICE_TYPE).memory._record_memory_history(max_entries=100000)\n"
                "train()\n"
                'if hasattr(torch.get_device_module(DEVICE_TYPE), "memory"):\n'
                '    torch.get_device_module(DEVICE_TYPE).memory._dump_snapshot(f"{folder}/snapshot.pickle")\n'
                "snapshot = (torch.get_device_module(DEVICE_TYPE).memory._snapshot() "
                'if hasattr(torch.get_device_module(DEVICE_TYPE), "memory") else {"segments": [], "device_traces": []})\n'
            ),
            "default": TORCH + (
                "train()\n"
                'snapshot = {"segments": [], "device_traces": []}\n'
            ),
        },
        id="memory snapshots: the device allocator's where its module records, else nothing recorded",
    ),
    pytest.param(
        TORCH + "dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
        {
            "npu": TORCH_NPU + "dtype = 'bfloat16' if torch.npu.is_available() and torch.npu.is_bf16_supported() else 'float16'\n",
            "xpu": TORCH + "dtype = 'bfloat16' if torch.xpu.is_available() and torch.xpu.is_bf16_supported() else 'float16'\n",
            "mps": TORCH + "dtype = 'bfloat16' if torch.backends.mps.is_available() else 'float16'\n",
            "cpu": TORCH + "dtype = 'bfloat16' if torch.cpu.is_available() else 'float16'\n",
            "accelerator": TORCH + (
                'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
                "\n"
                "\n"
                "def device_bf16_supported(*args, **kwargs):\n"
                '    """torch.cuda.is_bf16_supported() on DEVICE_TYPE: its module\'s answer (torch.mps and torch.cpu have none: True)."""\n'
                '    query = getattr(torch.get_device_module(DEVICE_TYPE), "is_bf16_supported", None)\n'
                "    return query(*args, **kwargs) if query is not None else True\n"
                "\n"
                "\n"
                "dtype = 'bfloat16' if torch.accelerator.is_available() and device_bf16_supported() else 'float16'\n"
            ),
        },
        id="a capability test in a conditional expression: the device's answer on accelerator (False before Ampere)",
    ),
    pytest.param(
        "import random\n"
        "import torch\n"
        "def init_seeds(seed=0):\n"
        "    random.seed(seed)\n"
        "    torch.manual_seed(seed)\n"
        "    torch.cuda.manual_seed(seed)\n"
        "    torch.cuda.manual_seed_all(seed)\n",
        {
            "npu": (
                "import random\n"
                "import torch\n"
                "import torch_npu\n"
                "def init_seeds(seed=0):\n"
                "    random.seed(seed)\n"
                "    torch.manual_seed(seed)\n"
                "    torch.npu.manual_seed(seed)\n"
                "    torch.npu.manual_seed_all(seed)\n"
            ),
            "xpu": (
                "import random\n"
                "import torch\n"
                "def init_seeds(seed=0):\n"
                "    random.seed(seed)\n"
                "    torch.manual_seed(seed)\n"
                "    torch.xpu.manual_seed(seed)\n"
                "    torch.xpu.manual_seed_all(seed)\n"
            ),
            "mps": (
                "import random\n"
                "import torch\n"
                "def init_seeds(seed=0):\n"
                "    random.seed(seed)\n"
                "    torch.manual_seed(seed)\n"
                "    torch.mps.manual_seed(seed)\n"
                "    torch.manual_seed(seed)\n"
            ),
            "cpu": (
                "import random\n"
                "import torch\n"
                "def init_seeds(seed=0):\n"
                "    random.seed(seed)\n"
                "    torch.manual_seed(seed)\n"
            ),
            "accelerator": (
                "import random\n"
                "import torch\n"
                "def init_seeds(seed=0):\n"
                "    random.seed(seed)\n"
                "    torch.manual_seed(seed)\n"
            ),
        },
        id="per-device seeds in a seeding function",
    ),
    pytest.param(
        TORCH + (
            "torch.cuda.synchronize() if torch.cuda.is_available() else None\n"
            'mem = f"{torch.cuda.memory_reserved() / 1E9 if torch.cuda.is_available() else 0:.3g}G"\n'
        ),
        {
            "npu": TORCH_NPU + (
                "torch.npu.synchronize() if torch.npu.is_available() else None\n"
                'mem = f"{torch.npu.memory_reserved() / 1E9 if torch.npu.is_available() else 0:.3g}G"\n'
            ),
            "xpu": TORCH + (
                "torch.xpu.synchronize() if torch.xpu.is_available() else None\n"
                'mem = f"{torch.xpu.memory_reserved() / 1E9 if torch.xpu.is_available() else 0:.3g}G"\n'
            ),
            "mps": TORCH + (
                "torch.mps.synchronize() if torch.backends.mps.is_available() else None\n"
                'mem = f"{0.0:.3g}G"\n'
            ),
            "cpu": TORCH + 'mem = f"{0.0:.3g}G"\n',
            "accelerator": TORCH + (
                "torch.accelerator.synchronize() if torch.accelerator.is_available() else None\n"
                'mem = f"{torch.accelerator.memory_reserved() / 1E9 if torch.accelerator.is_available() else 0:.3g}G"\n'
            ),
        },
        id="a guarded expression statement, and a statistic in an f-string",
    ),
]

ROWS = [
    pytest.param(
        TORCH + "graphed = torch.cuda.make_graphed_callables(model, (x,))\n",
        {
            "npu": [("TP004", 2, "MODIFY")],
            "xpu": [("TP004", 2, "MODIFY")],
            "default": [("TP004", 2, "UNSUPPORTED")],
        },
        id="unsupported where the target lacks it",
    ),
    pytest.param(
        TORCH + "x = torch.cuda.some_made_up_api()\n",
        {
            "default": [("TP004", 2, "UNKNOWN")],
        },
        id="a name torch.cuda does not have is reported as unknown",
    ),
    pytest.param(
        TORCH + (
            "g = torch.cuda.CUDAGraph()\n"
            "with torch.cuda.graph(g):\n"
            "    y = model(x)\n"
            "g.replay()\n"
        ),
        {
            "npu": [("TP004", 2, "MODIFY"), ("TP004", 3, "MODIFY")],
            "xpu": [("TP004", 2, "MODIFY"), ("TP004", 3, "MODIFY")],
            "default": [("TP004", 2, "UNSUPPORTED"), ("TP004", 3, "UNSUPPORTED")],
        },
        id="CUDA graphs where the target has none",
    ),
    pytest.param(
        TORCH + "states = torch.cuda.get_rng_state_all()\n",
        {
            "mps": [("TP004", 2, "UNSUPPORTED")],
            "default": [("TP004", 2, "MODIFY")],
        },
        id="every GPU's generator state: ported everywhere but on mps (torch.mps has only its one generator's)",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_cuda_apis_follow_the_targets_verdict(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_what_is_left_is_reported(source, target, rows):
    assert_rows(source, target, rows, CODE)
