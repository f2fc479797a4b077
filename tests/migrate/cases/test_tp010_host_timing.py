"""TP010, CUDA timing events where the target has none (cpu; accelerator, which may have no device):
an event in a plain name becomes clock readings; any other becomes a HostEvent written into the file."""

import pytest

from _fixture_cases import TORCH, TORCH_NPU, assert_migrates, per_target

CODE = "TP010"

CASES = [
    pytest.param(
        TORCH + (
            "def timed(step):\n"
            "    start = torch.cuda.Event(enable_timing=True)\n"
            "    end = torch.cuda.Event(enable_timing=True)\n"
            "    start.record()\n"
            "    step()\n"
            "    end.record()\n"
            "    torch.cuda.synchronize()\n"
            "    return start.elapsed_time(end)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def timed(step):\n"
                "    start = torch.npu.Event(enable_timing=True)\n"
                "    end = torch.npu.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    torch.npu.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "xpu": TORCH + (
                "def timed(step):\n"
                "    start = torch.xpu.Event(enable_timing=True)\n"
                "    end = torch.xpu.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    torch.xpu.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "mps": TORCH + (
                "def timed(step):\n"
                "    start = torch.mps.Event(enable_timing=True)\n"
                "    end = torch.mps.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    torch.mps.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "cpu": (
                "import time\n"
                "\n"
                "import torch\n"
                "def timed(step):\n"
                "    start = time.perf_counter()\n"
                "    step()\n"
                "    end = time.perf_counter()\n"
                "    return (end - start) * 1000\n"
            ),
            "accelerator": (
                "import time\n"
                "\n"
                "import torch\n"
                "def timed(step):\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    start = time.perf_counter()\n"
                "    step()\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    end = time.perf_counter()\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    return (end - start) * 1000\n"
            ),
        },
        id="two events in plain names, and a synchronize",
    ),
    pytest.param(
        TORCH + (
            "def timed_pair(step):\n"
            "    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
            "    start.record()\n"
            "    step()\n"
            "    end.record()\n"
            "    end.synchronize()\n"
            "    return start.elapsed_time(end)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def timed_pair(step):\n"
                "    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    end.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "xpu": TORCH + (
                "def timed_pair(step):\n"
                "    start, end = torch.xpu.Event(enable_timing=True), torch.xpu.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    end.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "mps": TORCH + (
                "def timed_pair(step):\n"
                "    start, end = torch.mps.Event(enable_timing=True), torch.mps.Event(enable_timing=True)\n"
                "    start.record()\n"
                "    step()\n"
                "    end.record()\n"
                "    end.synchronize()\n"
                "    return start.elapsed_time(end)\n"
            ),
            "cpu": (
                "import time\n"
                "\n"
                "import torch\n"
                "def timed_pair(step):\n"
                "    start = time.perf_counter()\n"
                "    step()\n"
                "    end = time.perf_counter()\n"
                "    return (end - start) * 1000\n"
            ),
            "accelerator": (
                "import time\n"
                "\n"
                "import torch\n"
                "def timed_pair(step):\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    start = time.perf_counter()\n"
                "    step()\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    end = time.perf_counter()\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    return (end - start) * 1000\n"
            ),
        },
        id="two events bound at once, and end.synchronize()",
    ),
    pytest.param(
        TORCH + (
            "class Timer:\n"
            "    def __init__(self):\n"
            "        self.start = torch.cuda.Event(enable_timing=True)\n"
        ),
        {
            "npu": TORCH_NPU + (
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = torch.npu.Event(enable_timing=True)\n"
            ),
            "xpu": TORCH + (
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = torch.xpu.Event(enable_timing=True)\n"
            ),
            "mps": TORCH + (
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = torch.mps.Event(enable_timing=True)\n"
            ),
            "cpu": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        pass\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = HostEvent(enable_timing=True)\n"
            ),
            "accelerator": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "class Timer:\n"
                "    def __init__(self):\n"
                "        self.start = HostEvent(enable_timing=True)\n"
            ),
        },
        id="an event kept in an attribute becomes a HostEvent",
    ),
    pytest.param(
        TORCH + (
            "def per_step(steps):\n"
            "    starts = [torch.cuda.Event(enable_timing=True) for _ in steps]\n"
            "    ends = [torch.cuda.Event(enable_timing=True) for _ in steps]\n"
            "    for i, step in enumerate(steps):\n"
            "        starts[i].record()\n"
            "        step()\n"
            "        ends[i].record()\n"
            "    torch.cuda.synchronize()\n"
            "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def per_step(steps):\n"
                "    starts = [torch.npu.Event(enable_timing=True) for _ in steps]\n"
                "    ends = [torch.npu.Event(enable_timing=True) for _ in steps]\n"
                "    for i, step in enumerate(steps):\n"
                "        starts[i].record()\n"
                "        step()\n"
                "        ends[i].record()\n"
                "    torch.npu.synchronize()\n"
                "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
            ),
            "xpu": TORCH + (
                "def per_step(steps):\n"
                "    starts = [torch.xpu.Event(enable_timing=True) for _ in steps]\n"
                "    ends = [torch.xpu.Event(enable_timing=True) for _ in steps]\n"
                "    for i, step in enumerate(steps):\n"
                "        starts[i].record()\n"
                "        step()\n"
                "        ends[i].record()\n"
                "    torch.xpu.synchronize()\n"
                "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
            ),
            "mps": TORCH + (
                "def per_step(steps):\n"
                "    starts = [torch.mps.Event(enable_timing=True) for _ in steps]\n"
                "    ends = [torch.mps.Event(enable_timing=True) for _ in steps]\n"
                "    for i, step in enumerate(steps):\n"
                "        starts[i].record()\n"
                "        step()\n"
                "        ends[i].record()\n"
                "    torch.mps.synchronize()\n"
                "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
            ),
            "cpu": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        pass\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "def per_step(steps):\n"
                "    starts = [HostEvent(enable_timing=True) for _ in steps]\n"
                "    ends = [HostEvent(enable_timing=True) for _ in steps]\n"
                "    for i, step in enumerate(steps):\n"
                "        starts[i].record()\n"
                "        step()\n"
                "        ends[i].record()\n"
                "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
            ),
            "accelerator": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "def per_step(steps):\n"
                "    starts = [HostEvent(enable_timing=True) for _ in steps]\n"
                "    ends = [HostEvent(enable_timing=True) for _ in steps]\n"
                "    for i, step in enumerate(steps):\n"
                "        starts[i].record()\n"
                "        step()\n"
                "        ends[i].record()\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.accelerator.synchronize()\n"
                "    return [s.elapsed_time(e) for s, e in zip(starts, ends)]\n"
            ),
        },
        id="events kept in lists become HostEvents",
    ),
    pytest.param(
        TORCH + (
            "def recorded() -> torch.cuda.Event:\n"
            "    event = torch.cuda.Event(enable_timing=True)\n"
            "    event.record()\n"
            "    return event\n"
        ),
        {
            "npu": TORCH_NPU + (
                "def recorded() -> torch.npu.Event:\n"
                "    event = torch.npu.Event(enable_timing=True)\n"
                "    event.record()\n"
                "    return event\n"
            ),
            "xpu": TORCH + (
                "def recorded() -> torch.xpu.Event:\n"
                "    event = torch.xpu.Event(enable_timing=True)\n"
                "    event.record()\n"
                "    return event\n"
            ),
            "mps": TORCH + (
                "def recorded() -> torch.mps.Event:\n"
                "    event = torch.mps.Event(enable_timing=True)\n"
                "    event.record()\n"
                "    return event\n"
            ),
            "cpu": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        pass\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "def recorded() -> HostEvent:\n"
                "    event = HostEvent(enable_timing=True)\n"
                "    event.record()\n"
                "    return event\n"
            ),
            "accelerator": (
                "import time\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "class HostEvent:\n"
                '    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""\n'
                "\n"
                "    def __init__(self, enable_timing=False, blocking=False, interprocess=False):\n"
                "        self.time = None\n"
                "\n"
                "    def record(self, stream=None):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "        self.time = time.perf_counter()\n"
                "\n"
                "    def elapsed_time(self, end_event):\n"
                "        return (end_event.time - self.time) * 1000\n"
                "\n"
                "    def synchronize(self):\n"
                "        if torch.accelerator.is_available():\n"
                "            torch.accelerator.synchronize()\n"
                "\n"
                "    def wait(self, stream=None):\n"
                "        pass\n"
                "\n"
                "    def query(self):\n"
                "        return True\n"
                "\n"
                "\n"
                "def recorded() -> HostEvent:\n"
                "    event = HostEvent(enable_timing=True)\n"
                "    event.record()\n"
                "    return event\n"
            ),
        },
        id="an event returned, and the annotation that names its class",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_events_time_with_the_host_clock(source, target, expected):
    assert_migrates(source, target, expected)
