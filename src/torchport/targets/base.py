"""A target: everything the rewriter, the patcher and the analysers need to know about one backend.

Verdicts for `torch.cuda.*` are derived, not listed by hand: a CUDA API whose name exists in the
target's device module (per the generated surface) is `same`, and so is a class CUDA names after
itself where the device module has its twin (`CUDAGraph` is `torch.npu.NPUGraph`); otherwise the
target's own `overrides`, then the portable fallbacks in `fallbacks.py`, then `unsupported`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache

from torchport.apis import graphs
from torchport.apis.amp import AMP_PREFIX, AUTOCAST, TAKES_DEVICE_TYPE, TORCH_AMP
from torchport.apis.cuda_module import DEVICE_MODULE, PROCESSOR_COUNT
from torchport.apis.kernel_paths import KernelPath
from torchport.apis.memory import MEMORY_HISTORY_APIS
from torchport.targets.advice import Advice, common
from torchport.targets import fallbacks
from torchport.targets.kernels import Kernels
from torchport.targets.launch import Launch
from torchport.targets.verdict import Kind, Verdict, adapted, same, unsupported

# The Target fields that hold Python source (an expression written into migrated files and
# evaluated by `run`), checked when a target is made.
EXPRESSION_FIELDS = ("device_type_expr", "dist_backend", "guard", "float16_autocast", "autocast_enabled",
                     "data_parallel", "data_parallel_apply")


def _check_source(target: str, what: str, source: str | None, mode: str) -> None:
    if not source:
        return
    try:
        compile(source, f"<target {target}: {what}>", mode)
    except SyntaxError as error:
        raise ValueError(f"target {target}: {what} is not valid Python ({error.msg}): {source}") from None


_DOTTED_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # `platform.processor`
_STRING = re.compile(r"[A-Za-z]*(\"[^\"]*\"|'[^']*')")  # (a string's words, a docstring's, name nothing)


def dotted_names(source: str) -> list[str]:
    """The dotted names (`os.sysconf`, `torch.accelerator.synchronize`) that a target's source
    reads from outside: not those of names it binds itself (a definition's `self.time`).
    `source` may also be several expressions side by side (what a rewrite says it needs)."""
    try:
        bound = _bound_names(ast.parse(source))
    except SyntaxError:
        bound = set()  # (expressions side by side bind nothing)
    return [dotted for dotted in _DOTTED_NAME.findall(_STRING.sub('""', source)) if dotted.split(".")[0] not in bound]


def definitions_used(definitions: dict[str, str], source: str) -> list[str]:
    """The names of `definitions` that `source` uses, and those these use in turn, in the
    order they are defined (a definition uses only those before it)."""
    used, text = set(), source
    for name, statement in reversed(definitions.items()):
        if re.search(rf"\b{name}\b", text):
            used.add(name)
            text += "\n" + statement
    return [name for name in definitions if name in used]


@lru_cache(maxsize=None)
def modules_used(source: str) -> frozenset[str]:
    """The modules a piece of the target's source (a definition, an expression) refers to by
    name: `os.path.join` uses `os.path`, any torch name `torch`; names the source binds itself
    (a local variable, a local import) are not modules it needs."""
    tree = ast.parse(source)
    bound = _bound_names(tree)
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            dotted = _dotted(node)
            if dotted is not None and dotted[0] not in bound:
                used.add("torch" if dotted[0] == "torch" else ".".join(dotted[:-1]))
    return frozenset(used)


def _bound_names(tree: ast.AST) -> set[str]:
    """The names a piece of source binds itself (assigned, a parameter, a local import, a def):
    a dotted name starting with one of them reads no module."""
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


def _dotted(node: ast.expr) -> list[str] | None:
    """`["os", "path", "join"]` for `os.path.join`; None for an attribute of anything but a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


@dataclass(frozen=True)
class Target:
    name: str
    summary: str
    device_module: str  # where torch.cuda.* goes, e.g. "torch.npu"
    surface: frozenset[str]  # public names of device_module, from generated data
    device_type: str | None  # literal device type; None where it is only known at run time
    device_type_expr: str = ""  # source expression for the device type (defaults to the literal)
    # Module-level names the target's expressions use, each with the statement that defines it
    # (`DEVICE_TYPE = ...`): migrate inserts the statement where the name is used, run evaluates it.
    # Those of the portable fallbacks (fallbacks.DEFINITIONS) are added to every target's.
    definitions: dict[str, str] = field(default_factory=dict)
    # One of the definitions, a function: the target's device for whatever `x.cuda(d)` takes (an
    # index, None, a device or its name), for a `d` whose kind the rewrite cannot tell.
    device_function: str | None = None
    autocast_enabled: str | None = None  # ANDed with an autocast's `enabled` (None: kept as written)
    tensor_method: str | None = None  # x.cuda() -> x.<tensor_method>(); None: x.to(<device>)
    # What a storage's .cuda() becomes (in torch.load's map_location); None: storage.to(device=<device>).
    # torch's storages have .cpu(), and a method for each renamed privateuse1 backend (torch_npu's .npu()).
    storage_method: str | None = None
    keeps_device_index: bool = True  # "cuda:1" -> "<type>:1"; False: the index is dropped
    setup_import: str | None = None  # e.g. "torch_npu": imported right after `import torch`
    dist_backend: str = "gloo"  # source expression for what "nccl" becomes
    ddp_device_ids: bool = True  # False: DDP(device_ids=...) is dropped (CPU modules take None)
    # What nn.DataParallel(...) becomes: torch's replicates and scatters over the devices with CUDA's
    # copies, which only CUDA has; None keeps it (on the CPU and mps it only wraps the module).
    data_parallel: str | None = fallbacks.ONE_DEVICE_DATA_PARALLEL
    # What nn.parallel.data_parallel(module, inputs) becomes (torch's finds no device off CUDA).
    data_parallel_apply: str = fallbacks.ONE_DEVICE_APPLY
    visible_devices_env: str | None = None  # what CUDA_VISIBLE_DEVICES becomes (None: report only)
    # NCCL's environment settings (apis.distributed.NCCL_SETTING) -> the target's collective library's
    # twins; a setting without one does nothing there (a row says so). None: NCCL may be the
    # collective library here (the device-agnostic target on a GPU), so they are left as they are.
    collective_settings: dict[str, str] | None = field(default_factory=dict)
    # torch.backends flags CUDA reads (`torch.backends.cuda.matmul.allow_tf32`) -> the target's twin,
    # set in their place; the others are noted as having no effect (TP009).
    backend_flags: dict[str, str] = field(default_factory=dict)
    # What stands for CUDA's `properties.multi_processor_count` (apis/cuda_module.py PROCESSOR_COUNT):
    # the target's own name for its properties' count of compute units ("gpu_subslice_count"), or a
    # function of the properties, written "name()", that the target defines.
    processor_count: str = PROCESSOR_COUNT
    # Whether Lightning has an accelerator of this device type built in (CPU, CUDA, mps, TPU do), or
    # needs one a plugin registers (Trainer(accelerator="npu") raises without)
    lightning_built_in: bool = True
    # Other libraries' APIs built for CUDA and not for this target (DeepSpeed's fused optimizers, bitsandbytes'
    # quantization): qualified name -> why, and what to use instead (a row where a script calls one, TP036).
    missing_builds: dict[str, str] = field(default_factory=dict)
    # The kernel paths of apis/kernel_paths.py (Triton, FP8, FlexAttention, torch.compile, CUDA graphs) this
    # target lacks or runs with a caveat, each with why and the way out (TP037); the others run as on CUDA.
    kernel_paths: dict[str, KernelPath] = field(default_factory=dict)
    # The module with torch.cuda.memory's history recorder and snapshots (apis/memory.py MEMORY_HISTORY):
    # "torch.xpu.memory"; None: no device allocator records (fallbacks.MEMORY_HISTORY_VALUES).
    memory_history: str | None = None
    launch: Launch = field(default_factory=Launch)  # what run_distributed.sh needs (launch.py)
    float16_autocast: str | None = None  # what autocast's float16 becomes (None: kept)
    host_timing: bool = False  # CUDA timing events become host-clock readings (no usable events); needs HostEvent
    profiler_activity: str | None = None  # what ProfilerActivity.CUDA becomes ("XPU"); None: no such activity
    profiler_module: str | None = None  # a profiler of its own that stands for torch.profiler (torch_npu.profiler)
    profiler_names: frozenset[str] = frozenset()  # the names of torch.profiler it has (from its surface)
    guard: str | None = None  # run device-module calls only when this is true (no accelerator)
    unguarded: frozenset[str] = frozenset()  # device-module names that are safe without the guard
    surface_version: str = ""
    amp_surface: frozenset[str] = frozenset()  # names of the target's own `<device_module>.amp`, if any
    # The apex names of the target's own apex build (Ascend's: apis/apex.py ASCEND_APEX), kept as
    # written; the rest of a file's apex, and all of it on a target with none, is converted to
    # native torch (`migrate --apex native` converts it all anywhere).
    apex_build: tuple[str, ...] = ()
    rank: int = 99  # where the target is listed; `auto` tries device targets in this order
    auto: bool = False  # whether `--target auto` may pick it (the CPU is auto's last resort)
    overrides: dict[str, Verdict] = field(default_factory=dict)
    advice: Advice = field(default_factory=common)  # speed and precision facts (advice.py)
    # -- what `ops check` reads (kernels.py) --
    kernels: Kernels | None = None  # where its kernels are listed; None: in no data torchport holds

    @property
    def keeps_apex(self) -> bool:
        """Whether the target has an apex build of its own (what of apex it keeps: apex_build)."""
        return bool(self.apex_build)

    def __post_init__(self) -> None:
        """A target without surface data would make every API a no-op or unsupported, silently;
        a source expression that does not parse would be written into every migrated file."""
        if not self.surface:
            raise ValueError(f"target {self.name}: no surface data for {self.device_module}")
        # (what the portable fallbacks define, after the target's own: they use none of those)
        object.__setattr__(self, "definitions", {**self.definitions, **{
            name: statement for name, statement in fallbacks.DEFINITIONS.items() if name not in self.definitions}})
        for name, statement in self.definitions.items():
            if not statement.startswith((f"{name} = ", f"def {name}(", f"class {name}:", f"class {name}(")):
                raise ValueError(f"target {self.name}: the definition of {name} must assign it or define it")
            _check_source(self.name, name, statement, "exec")
        if self.host_timing and fallbacks.HOST_EVENT not in self.definitions:
            raise ValueError(f"target {self.name}: host timing needs a {fallbacks.HOST_EVENT} definition")
        if self.device_function is not None and not self.definitions.get(self.device_function, "").startswith("def "):
            raise ValueError(f"target {self.name}: its device function {self.device_function} is not a function it defines")
        for field_name in EXPRESSION_FIELDS:
            _check_source(self.name, field_name, getattr(self, field_name), "eval")
        for api, verdict in self.overrides.items():
            for part in ("replacement", "guard", "value", "or_value"):
                _check_source(self.name, f"{api} {part}", getattr(verdict, part), "eval")

    @property
    def device_source(self) -> str:
        return self.device_type_expr or repr(self.device_type)

    @property
    def runs_cuda_code(self) -> bool:
        """Whether CUDA code runs here as written (the target is CUDA itself): the rules have
        nothing to move, so `migrate` leaves CUDA code as it is (only `--from npu`, `--distributed`
        and `--apex native` rewrite anything on it)."""
        return self.device_module == DEVICE_MODULE

    @property
    def has_device(self) -> bool:
        """False on the CPU: no device to copy to, pin for, launch on or index (the advice's fact,
        read by rules and patches alike)."""
        return self.advice.has_device

    @property
    def device_chosen_at_run_time(self) -> bool:
        """Whether the device type is known only when the script runs (the device-agnostic
        target's DEVICE_TYPE): its device is written as an expression, not a literal."""
        return self.device_type is None

    def verdict(self, api: str) -> Verdict:
        """What `api` (a qualified `torch.cuda...` name) becomes on this target."""
        if api in self.overrides:
            return self.overrides[api]
        if api == AMP_PREFIX[:-1] and self.amp_surface:
            return same(api, f"{self.device_module}.amp")
        if api == DEVICE_MODULE:  # the module itself, held as a value (`mod = torch.cuda if gpu else torch.cpu`)
            return same(api, self.device_module)
        if api.startswith(AMP_PREFIX):
            return self._amp_verdict(api)
        name = api.rsplit(".", 1)[1]
        if api in MEMORY_HISTORY_APIS and self.memory_history is not None:
            return same(api, f"{self.memory_history}.{name}", "the same recorder and snapshot, of this device's allocator")
        if name == "Event" and self.host_timing:
            return adapted(api, "time.perf_counter", "timed with the host clock", drop_args=True)
        if name in self.surface:
            replacement = f"{self.device_module}.{name}"
            if self.guard and name not in self.unguarded:
                value = fallbacks.result_value(name)
                return adapted(
                    api, replacement, f"only when {self.guard}", guard=self.guard, value=value
                )
            return same(api, replacement)
        twin = self._device_named(name)
        if twin is not None:
            return same(api, f"{self.device_module}.{twin}", f"the same class, named after the {self.device_type}")
        fallback = fallbacks.verdict(api, name)
        if fallback is not None:
            return fallback
        return unsupported(api, f"{self.device_module} has no {name}; port this call by hand")

    def _device_named(self, name: str) -> str | None:
        """The name the target's device module gives a class CUDA names after itself
        (`CUDAGraph` is `torch.npu.NPUGraph`, `torch.xpu.XPUGraph`), where it has one."""
        if self.device_chosen_at_run_time:
            return None
        twin = graphs.twin(name, self.device_type)
        return twin if twin in self.surface else None

    def _amp_verdict(self, api: str) -> Verdict:
        name = api[len(AMP_PREFIX):]
        if name in self.amp_surface:
            return same(api, f"{self.device_module}.amp.{name}", "the target's own AMP, with CUDA's signature")
        if name in TAKES_DEVICE_TYPE:
            note = f"device type {self.device_source}"
            if name == AUTOCAST and self.float16_autocast:
                note += f"; float16 becomes {self.float16_autocast}"
            return adapted(api, f"{TORCH_AMP}.{name}", note)
        return unsupported(api, "no torch.amp equivalent")

    def verdicts(self, apis: list[str]) -> dict[str, Verdict]:
        return {api: self.verdict(api) for api in apis}

    def counts(self, apis: list[str]) -> dict[str, int]:
        counts = {kind.value: 0 for kind in Kind}
        for verdict in self.verdicts(apis).values():
            counts[verdict.kind.value] += 1
        return counts
