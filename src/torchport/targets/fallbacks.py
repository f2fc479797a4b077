"""Portable stand-ins for `torch.cuda` APIs a target's device module lacks.

These hold for every target: seeding goes through torch's global generator (which seeds every
device), memory statistics have no meaning where there is no device allocator, and cache or
statistic resets have nothing to reset.
"""

from __future__ import annotations

from torchport.apis.memory import EMPTY_SNAPSHOT, MEMORY_HISTORY_APIS
from torchport.targets.verdict import Verdict, adapted, noop, same

SEEDING = {
    "manual_seed": "torch.manual_seed",
    "manual_seed_all": "torch.manual_seed",
    "seed": "torch.seed",
    "seed_all": "torch.seed",
    "initial_seed": "torch.initial_seed",
    "get_rng_state": "torch.get_rng_state",
    "set_rng_state": "torch.set_rng_state",
}

# Every device's generator state, where the CPU stands in for the GPUs: its one generator's (torch's
# global one, which torch.get_rng_state() reads). `get` answers it in a list, as CUDA's answers one state
# per GPU; `set` restores the first state of such a list: a checkpoint saved here loads here, and an
# empty list (what CUDA's get_rng_state_all() answers on a machine without GPUs) leaves the generator as
# it is. A state saved on a GPU is that GPU's generator's (Philox, 16 bytes): torch refuses it for the
# CPU's, rightly; the script's own torch.set_rng_state restores the CPU generator from such a checkpoint.
HOST_GET_RNG_STATE_ALL = "host_get_rng_state_all"
HOST_SET_RNG_STATE_ALL = "host_set_rng_state_all"
HOST_RNG_STATE_FUNCTIONS = {
    HOST_GET_RNG_STATE_ALL: '''def host_get_rng_state_all():
    """torch.cuda.get_rng_state_all() where the CPU stands in for the GPUs: its one generator's state, in a list."""
    return [torch.get_rng_state()]''',
    HOST_SET_RNG_STATE_ALL: '''def host_set_rng_state_all(new_states):
    """torch.cuda.set_rng_state_all(states) where the CPU stands in for the GPUs: the first state is its generator's."""
    for state in new_states[:1]:
        torch.set_rng_state(state)''',
}


def host_rng_state_verdicts() -> dict[str, Verdict]:
    """The overrides of a target whose one generator is the CPU's (see HOST_RNG_STATE_FUNCTIONS)."""
    get, put = "torch.cuda.get_rng_state_all", "torch.cuda.set_rng_state_all"
    return {
        get: adapted(get, HOST_GET_RNG_STATE_ALL, "the CPU generator's state, in a list of one"),
        put: adapted(put, HOST_SET_RNG_STATE_ALL, "the CPU generator from the list's first state: what "
                     "get_rng_state_all() saved here round-trips; torch refuses a state saved on a GPU"),
    }


# What a memory or status query stands for where the target has no such notion.
RESULT_VALUES = {
    "memory_allocated": "0",
    "max_memory_allocated": "0",
    "memory_reserved": "0",
    "max_memory_reserved": "0",
    "memory_cached": "0",
    "max_memory_cached": "0",
    "device_memory_used": "0",
    "memory_stats": "{}",
    "memory_stats_as_nested_dict": "{}",
    "memory_summary": '""',
    "current_device": "0",
    "utilization": "0",
}

# A device's properties are the host's: a function written once into the file that needs it
# (migrate) or evaluated once (run); its memory query differs between Windows and the others.
HOST_PROPERTIES_FUNCTION = '''def host_properties():
    """What get_device_properties() tells of a GPU, for the host: its processor, memory, cores and name."""
    if os.name == "nt":  # Windows
        import ctypes

        kilobytes = ctypes.c_ulonglong()
        ctypes.windll.kernel32.GetPhysicallyInstalledSystemMemory(ctypes.byref(kilobytes))
        memory = kilobytes.value * 1024
    else:  # Linux, macOS
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return types.SimpleNamespace(name=platform.processor() or platform.machine(), major=0, minor=0,
                                 total_memory=memory, multi_processor_count=os.cpu_count(),
                                 uuid=f"host-{platform.node()}")'''
HOST_PROPERTIES = "host_properties()"

# Free and total memory, as `mem_get_info()` answers them for a GPU: the host's. The system counts
# free pages on Linux; macOS does not (free is then the total, what a script sizing its batches
# can use), and Windows has no sysconf (nothing is known: 0, 0).
HOST_MEMORY_INFO = '''def host_memory_info():
    """(free, total) bytes of the host's memory, as CUDA's mem_get_info() gives them for a GPU."""
    counts = getattr(os, "sysconf_names", {})
    if "SC_PHYS_PAGES" not in counts:
        return 0, 0
    page = os.sysconf("SC_PAGE_SIZE")
    total = page * os.sysconf("SC_PHYS_PAGES")
    return (page * os.sysconf("SC_AVPHYS_PAGES") if "SC_AVPHYS_PAGES" in counts else total), total'''

# A stream where the target's own lacks what CUDA's has: torch.cpu.Stream (what torch.cpu.current_stream()
# returns) takes part in `wait_stream`, `wait_event`, `record_event` and `with torch.cpu.stream(s)`, but
# has no `synchronize` or `query`, which CUDA code calls on its streams (`torch.cuda.current_stream().synchronize()`,
# a prefetcher's `self.stream.synchronize()`). This one is torch.cpu's with those two: the CPU's work is
# done when the call returns, so there is nothing to wait for. (torch.Stream("cpu") has them, but its
# wait_stream raises: "cpu backend doesn't support events".)
HOST_STREAM = "HostStream"
HOST_STREAM_CLASS = '''class HostStream(torch.cpu.Stream):
    """A CUDA stream on the CPU: torch.cpu.Stream, with the synchronize() and query() CUDA's streams have."""

    def __init__(self, device=None, priority=0, **kwargs):
        super().__init__()

    def synchronize(self):
        pass

    def query(self):
        return True'''
# The torch.cuda names that give a stream, and what stands for them where HOST_STREAM does.
HOST_STREAM_APIS = {"current_stream": f"{HOST_STREAM}()", "default_stream": f"{HOST_STREAM}()"}
HOST_STREAM_CLASS_API = "Stream"


def host_stream_verdicts() -> dict[str, Verdict]:
    """The overrides of a target whose device module's streams are torch.cpu's (see HOST_STREAM)."""
    why = "the CPU's stream (torch.cpu.Stream has no synchronize or query; this one, written into the file, has)"
    found = {f"torch.cuda.{name}": noop(f"torch.cuda.{name}", why, value) for name, value in HOST_STREAM_APIS.items()}
    api = f"torch.cuda.{HOST_STREAM_CLASS_API}"
    found[api] = adapted(api, HOST_STREAM, why, drop_args=True)
    return found


# Timing events where the target has none (`Target.host_timing`): where an event is kept in a
# container, an attribute or passed on, the rewrite cannot read the clock into its place, so the
# event becomes this class, written into the file. `record()` waits for the device first (when
# there is one), so the interval covers the work queued before it, as a CUDA event's would.
HOST_EVENT = "HostEvent"
_HOST_EVENT_CLASS = '''class HostEvent:
    """A CUDA timing event on the host clock: record() reads it, elapsed_time() is in milliseconds."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.time = None

    def record(self, stream=None):
{wait}        self.time = time.perf_counter()

    def elapsed_time(self, end_event):
        return (end_event.time - self.time) * 1000

    def synchronize(self):
{wait_or_pass}
    def wait(self, stream=None):
        pass

    def query(self):
        return True'''


def host_event_class(wait_for_device: str = "") -> str:
    """The HostEvent definition for a target whose device is waited for by `wait_for_device`
    (statements; "" where there is no device, the CPU)."""
    wait = "".join(f"        {line}\n" for line in wait_for_device.splitlines())
    return _HOST_EVENT_CLASS.format(wait=wait, wait_or_pass=wait or "        pass\n")


# How many devices `device_count()` counts where the CPU stands in for the GPUs: one per process
# the launcher started on this machine (torchrun's LOCAL_WORLD_SIZE), 1 outside a launcher. A CUDA
# script launched with one process per GPU reads the count as a process count or a bound on its
# rank (`assert device_count() > local_rank`, `device_count() // local_world_size` devices each):
# with the CPU's own count (1) rank 1 fails its check and each rank gets 0 devices. Every call
# gets it, not only those the rewrite could tell are such uses: one CPU per launched process is
# what the script's author meant by one GPU per process, and outside a launcher the count is 1.
# (`os.getenv`: modules_used would read `os.environ.get` as a module `os.environ` to import.)
HOST_DEVICE_COUNT_FUNCTION = '''def host_device_count():
    """device_count() where the CPU stands in for the GPUs: one per process the launcher started here."""
    return int(os.getenv("LOCAL_WORLD_SIZE", "1"))'''
HOST_DEVICE_COUNT = "host_device_count()"

# nn.DataParallel where it cannot split a batch: torch's replicates the module and scatters the
# inputs over the devices with CUDA's own copies (torch_npu and XPU have none; Ascend supports DDP
# only), and off CUDA torch's data_parallel() finds no device at all. This one keeps what a script
# reads of a DataParallel (isinstance, `.module`, checkpoint keys prefixed "module.", device_ids
# empty as torch's on the CPU) and runs the module itself on its device, moving the inputs there
# as torch's scatter did (scripts pass CPU batches to DataParallel). N devices: DDP, one process each.
ONE_DEVICE_DATA_PARALLEL = "OneDeviceDataParallel"
ONE_DEVICE_DATA_PARALLEL_CLASS = '''class OneDeviceDataParallel(torch.nn.DataParallel):
    """nn.DataParallel on one device: the module runs itself there (DDP, one process per device, uses N)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        torch.nn.Module.__init__(self)
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        parameter = next(self.module.parameters(), None)
        if parameter is not None:
            inputs, kwargs = self.moved(inputs, parameter.device), self.moved(kwargs, parameter.device)
        return self.module(*inputs, **kwargs)

    @classmethod
    def moved(cls, value, device):
        if isinstance(value, torch.Tensor):
            return value.to(device)
        if isinstance(value, (list, tuple)):
            items = [cls.moved(v, device) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
        if isinstance(value, dict):
            return type(value)((k, cls.moved(v, device)) for k, v in value.items())
        return value'''
# nn.parallel.data_parallel(module, inputs, ...): the module applied once, on its device.
ONE_DEVICE_APPLY = "one_device_data_parallel"
ONE_DEVICE_APPLY_FUNCTION = '''def one_device_data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """nn.parallel.data_parallel(module, inputs) on one device: the module applied to the inputs there."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return OneDeviceDataParallel(module)(*inputs, **(module_kwargs or {}))'''

# Module-level definitions every target may need for the answers here (see `Target.definitions`).
DEFINITIONS = {"host_properties": HOST_PROPERTIES_FUNCTION, "host_memory_info": HOST_MEMORY_INFO,
               "host_device_count": HOST_DEVICE_COUNT_FUNCTION,
               ONE_DEVICE_DATA_PARALLEL: ONE_DEVICE_DATA_PARALLEL_CLASS, ONE_DEVICE_APPLY: ONE_DEVICE_APPLY_FUNCTION}
HOST_MEMORY = "host_memory_info()"

# Capability queries, answered for a device that has no such notion. bfloat16: the CPU computes
# it (natively with AVX512-BF16 or AMX, else emulated), which is what CUDA's default
# `including_emulation=True` asks; compute capability (0, 0) sends code down its pre-Ampere path.
QUERY_VALUES = {
    "is_bf16_supported": "True",
    "is_tf32_supported": "False",
    "get_device_capability": "(0, 0)",
    "get_device_properties": HOST_PROPERTIES,
    "mem_get_info": HOST_MEMORY,
}
QUERY_NOTES = {"get_device_properties": "its properties", "mem_get_info": "its free and total memory"}
# CUDA's compute capability is (major, minor); torch.xpu's and torch.accelerator's get_device_capability
# answer a dict of the device's properties, torch_npu's None unless TORCH_NPU_DEVICE_CAPABILITY is set
# (its docstring): `major, minor = ...` and `...[0] >= 8` need CUDA's answer, so they get (0, 0) there.
CAPABILITY = "get_device_capability"
NO_CAPABILITY = QUERY_VALUES[CAPABILITY]

# Profiler annotations (`torch.cuda.nvtx`): nothing records them off CUDA, so they do nothing.
NVTX = "torch.cuda.nvtx."
NVTX_ACTIONS = ("range_push", "range_pop", "range_start", "range_end", "mark")
NVTX_CONTEXTS = ("range",)


# Streams where there are none: the CPU's stream, which takes part in `wait_stream`, `with` and
# `synchronize` and waits for nothing.
STREAM_VALUES = {"current_stream": "torch.cpu.current_stream()", "default_stream": "torch.cpu.current_stream()"}


# torch's own classes, which torch.cuda re-exports outside its `__all__` (torch.cuda.OutOfMemoryError
# is torch.OutOfMemoryError): the same class on every target, spelled without CUDA.
TORCH_CLASSES = ("OutOfMemoryError", "AcceleratorError")


def result_value(name: str) -> str | None:
    """What a query stands for where the target cannot answer it (None: it is not a query)."""
    return RESULT_VALUES.get(name, QUERY_VALUES.get(name, STREAM_VALUES.get(name)))


ACTIONS = {
    "empty_cache",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "reset_accumulated_memory_stats",
    "ipc_collect",
    "set_per_process_memory_fraction",
    "set_sync_debug_mode",
    "synchronize",
    "init",
    "set_device",
}

# Context managers that select a device; where the target cannot switch devices they do nothing.
DEVICE_CONTEXTS = {"device", "device_of"}


# Memory snapshots where no device allocator records anything: nothing to record, an empty
# snapshot, and no file written (a script that reads the file back is told so in the row).
MEMORY_HISTORY_VALUES = {"_record_memory_history": None, "_snapshot": EMPTY_SNAPSHOT, "_dump_snapshot": None}


def verdict(api: str, name: str) -> Verdict | None:
    if api in MEMORY_HISTORY_APIS:
        why = "no device allocator here: nothing is recorded" + ("; no snapshot file is written"
                                                                  if name == "_dump_snapshot" else "")
        return noop(api, why, MEMORY_HISTORY_VALUES[name])
    if api == f"torch.cuda.{name}" and name in TORCH_CLASSES:
        return same(api, f"torch.{name}", "torch's own class, which torch.cuda re-exports")
    if api.startswith(NVTX):
        return _nvtx_verdict(api, name)
    if name in STREAM_VALUES:
        return noop(api, "no streams here: the CPU's stream, which waits for nothing", STREAM_VALUES[name])
    if name in QUERY_VALUES:
        note = "the host's answer: " + QUERY_NOTES.get(name, QUERY_VALUES[name])
        return noop(api, note, QUERY_VALUES[name])
    if name in SEEDING:
        return adapted(api, SEEDING[name], "torch's global generator: seeds the CPU and every device")
    if name in RESULT_VALUES:
        return noop(api, "no device memory statistics on this target", RESULT_VALUES[name])
    if name in ACTIONS:
        return noop(api, "nothing to do on this target")
    if name in DEVICE_CONTEXTS:
        return adapted(api, "contextlib.nullcontext", "one device: nothing to switch to", drop_args=True)
    if name == "get_device_name":
        return adapted(api, "platform.processor", "the host processor's name", drop_args=True)
    return None


def _nvtx_verdict(api: str, name: str) -> Verdict | None:
    if name in NVTX_CONTEXTS:
        return adapted(api, "contextlib.nullcontext", "profiler annotations are only recorded on CUDA", drop_args=True)
    if name in NVTX_ACTIONS:
        return noop(api, "profiler annotations are only recorded on CUDA")
    return None

