"""What the names in one library file mean: each CUDA hard-code, at its line, with what migrate and
run can do about it."""

from __future__ import annotations

import ast
from functools import lru_cache

from torchport.analyze.third_party.files import KERNEL_SOURCES
from torchport.analyze.third_party.finding import ThirdPartyFinding
from torchport.analyze.third_party.names import aliases
from torchport.apis.cuda_module import DEVICE_MODULE, MODULES, MOVE_METHOD, is_patched
from torchport.apis.devices import DEVICE_FIRST_CALLS, DEVICE_KEYWORDS, TO_METHODS
from torchport.apis.distributed import CUDA_DIST_BACKEND, NCCL_ENUM, PROCESS_GROUPS
from torchport.pyast import dotted_name
from torchport.runtime.callers import HONEST_ENV
from torchport.targets import surface
from torchport.targets.devices import cuda_device

# Libraries that exist only for CUDA: an import of one is a path no patch can move.
CUDA_ONLY_LIBRARIES = ("cupy", "pycuda", "numba.cuda", "cuda")

_CPP_EXTENSION = "torch.utils.cpp_extension."
BUILDS_AT_RUN_TIME = {f"{_CPP_EXTENSION}load", f"{_CPP_EXTENSION}load_inline"}
DECLARES_CUDA = {f"{_CPP_EXTENSION}CUDAExtension"}
_BUILDS_IN_SETUP = {f"{_CPP_EXTENSION}BuildExtension"}
_BACKEND_FLAGS = ("torch.backends.cudnn", "torch.backends.cuda")
_BUILD_TEST = "torch.version.cuda"
_DEVICE_WORDS = DEVICE_KEYWORDS | {"device_type"}

_ELSEWHERE = "migrate rewrites only the source it is given"
DEVICE = f"hard-codes the CUDA device: torchport run redirects it to the target at run time; {_ELSEWHERE}"
CUDA_API = ("uses torch.cuda: torchport run redirects it at run time as the target's verdict says "
            f"(`torchport targets`); {_ELSEWHERE}")
CUDA_API_HONEST = ("uses torch.cuda: torchport run gives {package} the real torch.cuda on purpose (a library "
                   f"that probes the hardware; ${HONEST_ENV} sets which): a probe sees the real machine, "
                   "any other call still needs CUDA")
CUDA_API_UNPATCHED = ("a torch.cuda API that torchport run does not patch: it still needs CUDA at run time; "
                      "neither migrate nor run reaches it")
BACKEND_FLAG = ("a cuDNN/CUDA backend flag: no effect off CUDA, left as is by migrate and run "
                "(harmless unless the library's logic depends on it)")
BUILD_TEST = ("tests for a CUDA build: torch.version.cuda is None off CUDA, so the library takes its other "
              "path; neither migrate nor run changes that")
NCCL_BACKEND = "the NCCL backend: torchport run maps it to the target's backend at run time"
NCCL_NAME = ("names the NCCL backend: torchport run maps it only where it reaches init_process_group or "
             'new_group (a test such as backend == "nccl" is false on the target)')
CUDA_EXTENSION = "a CUDA extension: neither migrate nor run can move it; it needs a kernel for the target"
CPP_EXTENSION = ("builds a C++ extension at run time: neither migrate nor run reaches native code; "
                 "CUDA among its sources needs a kernel for the target")
BUILD_EXTENSION = ("builds C++/CUDA extensions (setup.py): neither migrate nor run reaches native code; "
                   "CUDA sources among them need kernels for the target")
CUDA_LIBRARY = ("imports {module}, a CUDA-only library: neither migrate nor run can move it; this path "
                "needs another implementation on the target")
KERNEL_SOURCE = ("a CUDA kernel source (line 0: the whole file): needs a port to the target's kernel "
                 "language; neither migrate nor run reaches it")
COMPILED_CUDA = ("a compiled CUDA library (line 0: the whole file): neither migrate nor run reaches native "
                 "code; the library needs a build for the target")


def _cuda_device(node: ast.AST) -> str | None:
    """The CUDA device a literal spells ("cuda", "cuda:1"), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and cuda_device(node.value)[0]:
        return node.value
    return None


def _about_devices(name: str) -> bool:
    """Whether a parameter, keyword or variable of this name holds a device (`device`,
    `map_location`, `output_device`, `DEFAULT_DEVICE`, `device_type`)."""
    return name in _DEVICE_WORDS or name.lower().endswith("device")


def _names_nccl(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    value = node.value.lower()
    return value == CUDA_DIST_BACKEND or f"cuda:{CUDA_DIST_BACKEND}" in value.replace(" ", "")


@lru_cache(maxsize=None)
def _patched_cuda_names() -> frozenset[str]:
    """The torch.cuda APIs torchport run replaces: the callables of `surface.cuda_apis()` (module
    objects and plain values are left alone), by their last name, since run also replaces them
    in torch.cuda's submodules (`torch.cuda.memory.memory_allocated`)."""
    torch_cuda = surface.load(surface.TORCH_SURFACE)["modules"]
    kinds = {f"{module}.{name}": entry.get("kind") for module in MODULES
             for name, entry in torch_cuda.get(module, {}).items()}
    return frozenset(api for api in surface.cuda_apis() if is_patched(kinds.get(api, "function")))


def _cuda_api_message(api: str, honest: bool, package: str) -> str:
    if honest:
        return CUDA_API_HONEST.format(package=package)
    patched = _patched_cuda_names()
    if api in MODULES or api in patched:
        return CUDA_API
    module, _, name = api.rpartition(".")
    if module.startswith(f"{DEVICE_MODULE}.") and f"{DEVICE_MODULE}.{name}" in patched:
        return CUDA_API
    return CUDA_API_UNPATCHED


class CudaUses(ast.NodeVisitor):
    """One file's CUDA hard-codes, each as a finding at its own line."""

    def __init__(self, shown: str, module: str, home: list[str], honest: bool, package: str) -> None:
        self.shown, self.module, self.home = shown, module, home
        self.honest, self.package = honest, package
        self.aliases: dict[str, str] = {}
        self.scopes: list[str] = []
        self.claimed: set[int] = set()  # nccl literals already reported by their call
        self.findings: list[ThirdPartyFinding] = []

    def report(self, node: ast.AST, api: str, message: str) -> None:
        where = ".".join([self.module, *self.scopes]) if self.scopes else f"{self.module}, at import"
        self.findings.append(ThirdPartyFinding(self.shown, node.lineno, api, f"{message} (in {where})"))

    def qualified(self, dotted: str | None) -> str | None:
        """What a chain of names refers to: its first name through the imports (a bare `torch`
        counts as torch even where the file did not import it itself)."""
        if dotted is None:
            return None
        first, _, rest = dotted.partition(".")
        target = self.aliases.get(first, "torch" if first == "torch" else None)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def visit_Module(self, node: ast.Module) -> None:  # noqa: N802
        self.aliases = aliases(node.body, self.home)
        self.generic_visit(node)

    # scopes: the library function or class that holds a finding, and the names it imports
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:  # noqa: N802
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scopes.append(node.name)  # a default is shown as the function's, whose callers get it
        self.device_defaults(node.args)
        self.scopes.pop()
        self.inside(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        for expression in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(expression)
        self.inside(node)

    def inside(self, node) -> None:
        outer, local = self.aliases, aliases(node.body, self.home)
        if local:
            self.aliases = {**outer, **local}
        self.scopes.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.scopes.pop()
        self.aliases = outer

    def visit_Lambda(self, node: ast.Lambda) -> None:  # noqa: N802
        self.device_defaults(node.args)
        self.visit(node.body)

    def device_defaults(self, arguments: ast.arguments) -> None:
        """`def f(device="cuda")`: a parameter about a device whose default is CUDA."""
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
        for argument, default in pairs:
            if _about_devices(argument.arg):
                self.device_literals(default, argument.arg)
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(default)

    # imports: CUDA-only libraries
    def visit_Import(self, node: ast.Import) -> None:  # noqa: N802
        self.cuda_libraries(node, [alias.name for alias in node.names])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802
        if node.level == 0 and node.module:
            self.cuda_libraries(node, [f"{node.module}.{alias.name}" for alias in node.names])

    def cuda_libraries(self, node: ast.AST, names: list[str]) -> None:
        """One finding per CUDA-only library an import statement names."""
        found = {library for name in names for library in CUDA_ONLY_LIBRARIES
                 if name == library or name.startswith(f"{library}.")}
        for library in sorted(found):
            self.report(node, f"import {library}", CUDA_LIBRARY.format(module=library))

    # names: torch.cuda.*, backend flags, extensions
    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        if not self.named(node):
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.named(node)

    def named(self, node: ast.Attribute | ast.Name) -> bool:
        """Report a chain of names that means a CUDA API; True if it did (its parts are not
        looked at again)."""
        api = self.qualified(dotted_name(node))
        if api is None:
            return False
        message = self.meaning(api)
        if message is None:
            return False
        self.report(node, api, message)
        return True

    def meaning(self, api: str) -> str | None:
        if api == "torch.cuda" or api.startswith("torch.cuda."):
            return _cuda_api_message(api, self.honest, self.package)
        if any(api == flag or api.startswith(f"{flag}.") for flag in _BACKEND_FLAGS):
            return BACKEND_FLAG
        if api == _BUILD_TEST:
            return BUILD_TEST
        if api == NCCL_ENUM:
            return NCCL_NAME
        if api in DECLARES_CUDA:
            return CUDA_EXTENSION
        if api in _BUILDS_IN_SETUP:
            return BUILD_EXTENSION
        return None

    # calls: .cuda(), devices, backends, extensions built at run time
    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        function = node.func
        callee = self.qualified(dotted_name(function))
        if callee in BUILDS_AT_RUN_TIME:
            self.report(node, callee, CUDA_EXTENSION if builds_cuda(node) else CPP_EXTENSION)
            for argument in (*node.args, *node.keywords):
                self.visit(argument)
            return
        if isinstance(function, ast.Attribute) and function.attr == MOVE_METHOD and callee != DEVICE_MODULE:
            self.report(node, ".cuda()", DEVICE)
        self.devices(node, function, callee)
        self.backends(node, function)
        self.generic_visit(node)

    def devices(self, node: ast.Call, function: ast.AST, callee: str | None) -> None:
        first = node.args[0] if node.args else None
        device = _cuda_device(first) if first is not None else None
        if device and callee in DEVICE_FIRST_CALLS:
            self.report(first, f'{callee}("{device}")', DEVICE)
        elif device and isinstance(function, ast.Attribute) and function.attr in TO_METHODS:
            self.report(first, f'.{function.attr}("{device}")', DEVICE)
        for keyword in node.keywords:
            if keyword.arg in _DEVICE_WORDS:
                self.device_literals(keyword.value, keyword.arg)

    def device_literals(self, value: ast.AST, name: str) -> None:
        """`name="cuda"`, or `name="cuda" if ... else "cpu"`: CUDA device literals given to a name."""
        for literal in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
            device = _cuda_device(literal)
            if device:
                self.report(literal, f'{name}="{device}"', DEVICE)

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        """`self.device = "cuda"`, `DEFAULT_DEVICE = "cuda:0"`: a name about a device given a CUDA one."""
        for target in node.targets:
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if _about_devices(name):
                self.device_literals(node.value, name)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        name = node.target.attr if isinstance(node.target, ast.Attribute) else getattr(node.target, "id", "")
        if node.value is not None and _about_devices(name):
            self.device_literals(node.value, name)
        self.generic_visit(node)

    def backends(self, node: ast.Call, function: ast.AST) -> None:
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
        if name not in PROCESS_GROUPS:
            return
        chosen = [node.args[0]] if node.args else []
        chosen += [k.value for k in node.keywords if k.arg == "backend"]
        for value in chosen:
            if _names_nccl(value):
                self.claimed.add(id(value))
                self.report(value, f'{name}("{value.value}")', NCCL_BACKEND)

    def visit_Constant(self, node: ast.Constant) -> None:  # noqa: N802
        if id(node) not in self.claimed and _names_nccl(node):
            self.report(node, f'"{node.value}"', NCCL_NAME)


def builds_cuda(call: ast.Call) -> bool:
    """Whether a cpp_extension.load call visibly builds CUDA: a .cu source, `cuda_sources=` or
    `with_cuda=True`."""
    for keyword in call.keywords:
        if keyword.arg == "cuda_sources" or (
            keyword.arg == "with_cuda" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        ):
            return True
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(KERNEL_SOURCES)
        for node in ast.walk(call)
    )
