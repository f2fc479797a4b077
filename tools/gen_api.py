"""Generate the torch API data that TP026 (unknown torch API) and TP027 (no kernel on the target) read.

    python tools/gen_api.py [--yaml native_functions.yaml] [--out DIR]
                                       # needs torch 2.13 importable (and its torchgen, which ships with it)

Writes src/torchport/targets/data/torch-api-<version>.json; commit the result. It holds:
  modules   each walked namespace's public names by kind (module, class, function, value): its
            `dir()` after `import torch`, and the public submodules in its package folder (an
            `import torch.utils.tensorboard` makes one an attribute). A module not walked (a
            submodule of one that is) is known to exist, but nothing is said of its names.
            Names a module imports inside `try: ... except ImportError` (in its own file, or one it
            star-imports) are recorded too: they exist in other builds (ProcessGroupNCCL is
            torch.distributed's where torch is built with NCCL, not in the CPU wheel read here).
  open      walked modules that resolve names at run time (a module-level `__getattr__` whose
            answers its source does not spell): a name missing there is "cannot say", never unknown.
            The names a `__getattr__` does spell (`name == "set_vital"`, `name in _lazy_modules`,
            `_deprecated_attrs.get(name)`) are recorded as its module's values.
  removed   APIs kept only to say they are gone: a function whose body is one `raise` (torch.solve,
            torch.symeig: "deprecated since version 1.9 and is now removed"), with the replacement
            its message names first (`torch.linalg.solve`), or "" where it names none.
  device_types  the device types torch knows (`torch.device("hpu")`): a package for one may add
            `torch.<type>` (habana's torch.hpu, as torch_npu adds torch.npu), never judged.
  members   the public members of the classes whose attributes code spells (torch.Tensor's).
  lowers_to an API -> the aten operator its call is, from torch's own bindings: a builtin made from
            native_functions.yaml (`torch.var_mean` is the `var_mean` function variant,
            `torch.linalg.norm` is `linalg_norm` of `python_module: linalg`, `Tensor.add_` the
            `add_` method variant, `F.gelu` is `torch._C._nn.gelu`); a Python function whose name
            is an operator's and whose code calls it by that name (`F.adaptive_max_pool2d` calls
            `torch._C._nn.adaptive_max_pool2d`, through `boolean_dispatch`'s two functions). Any
            other API (classes such as nn.Conv2d or optim.Adam, wrappers of several ops) has no
            row: which ops it runs is unknown, and nothing is said of its kernels.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import pkgutil
import re
import sys
import textwrap
import types
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "src" / "torchport" / "targets" / "data"
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tools")]  # (torchport's own knowledge; gen_kernels' reading of the yaml)

from gen_kernels import TORCH_YAML, default_torch_yaml  # noqa: E402
from torchport.apis.cuda_module import kind  # noqa: E402

# The namespaces training code spells. Packages marked with a star are walked with their public
# submodules, all the way down.
WALKED = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.modules", "torch.nn.parameter",
    "torch.nn.utils*", "torch.nn.parallel", "torch.nn.attention", "torch.optim*", "torch.utils",
    "torch.utils.data", "torch.utils.checkpoint", "torch.utils.hooks", "torch.distributed",
    "torch.distributed.algorithms", "torch.autograd*", "torch.linalg", "torch.fft", "torch.special",
    "torch.backends*", "torch.amp*", "torch.jit", "torch.distributions", "torch.profiler", "torch.hub",
    "torch.random", "torch.sparse", "torch.func", "torch.multiprocessing", "torch.overrides",
    "torch.testing", "torch.compiler", "torch.export", "torch.library", "torch.types", "torch.serialization",
)
# Their names are another data's (the device modules' surfaces, tools/gen_surface.py) or another
# rule's (torch.cuda and cudnn's flags): known to exist, not walked.
NOT_WALKED = ("torch.cuda", "torch.cpu", "torch.mps", "torch.xpu", "torch.accelerator", "torch.npu",
              "torch.backends.cuda", "torch.backends.cudnn")
WITH_MEMBERS = ("torch.Tensor",)
# The modules of torch's generated bindings, by the `python_module:` of native_functions.yaml.
BINDING_MODULES = {"torch": None, "torch._C._VariableFunctions": None, "torch._C._nn": "nn",
                   "torch._C._linalg": "linalg", "torch._C._fft": "fft", "torch._C._special": "special",
                   "torch._C._sparse": "sparse", "torch._C._nested": "nested"}

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def walked_modules() -> list[str]:
    found = []
    for spec in WALKED:
        name = spec.rstrip("*")
        found.append(name)
        if spec.endswith("*"):
            found += [sub for sub in _submodules_below(name) if not sub.startswith(NOT_WALKED)]
    return list(dict.fromkeys(found))


def _submodules_below(package: str) -> list[str]:
    module = importlib.import_module(package)
    if not hasattr(module, "__path__"):
        return []
    below = []
    for info in pkgutil.iter_modules(module.__path__, package + "."):
        if info.name.rsplit(".", 1)[1].startswith("_"):
            continue
        below.append(info.name)
        if info.ispkg:
            below += _submodules_below(info.name)
    return below


def public_names(module: types.ModuleType) -> dict[str, str]:
    names = {n: kind(getattr(module, n, None)) for n in dir(module) if not n.startswith("_")}
    for info in pkgutil.iter_modules(getattr(module, "__path__", None) or []):
        if not info.name.startswith("_"):
            names.setdefault(info.name, "module")
    return names


def getattr_answers(module: types.ModuleType) -> tuple[set[str], bool]:
    """(the names a module-level `__getattr__` spells, whether it may answer others): read from its
    source, its comparisons with literals and its lookups in module-level collections."""
    function = vars(module).get("__getattr__")
    if function is None:
        return set(), False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return set(), True
    spelled = set(re.findall(r"==\s*[\"']([A-Za-z]\w*)[\"']", source))
    for collection in re.findall(r"\b(?:in|not in)\s+(\w+)|(\w+)\.get\(", source):
        value = vars(module).get(next(filter(None, collection)))
        if isinstance(value, (set, frozenset, dict, list, tuple)):
            spelled |= {n for n in value if isinstance(n, str) and not n.startswith("_")}
    closes = source.rstrip().splitlines()[-1].strip().startswith("raise AttributeError")
    return spelled, not closes


def build_dependent(module: types.ModuleType, depth: int = 1) -> set[str]:
    """The public names `module`'s file imports under `try: ... except ImportError` at its top
    level, and those of the modules it star-imports (`from .distributed_c10d import *`)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for inner in node.body:
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found |= {(a.asname or a.name).split(".")[0] for a in inner.names if a.name != "*"}
        elif isinstance(node, ast.ImportFrom) and depth and node.level and any(a.name == "*" for a in node.names):
            package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found |= build_dependent(importlib.import_module(source), depth - 1)
    return {n for n in found if not n.startswith("_")}


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


def module_table(name: str) -> tuple[dict[str, list[str]], bool]:
    """(kind -> sorted names, whether the module is open) of one walked module."""
    module = importlib.import_module(name)
    names = public_names(module)
    spelled, is_open = getattr_answers(module)
    for extra in spelled | build_dependent(module):
        names.setdefault(extra, "value")
    by_kind: dict[str, list[str]] = {}
    for attr, what in sorted(names.items()):
        by_kind.setdefault(what, []).append(attr)
    return by_kind, is_open or not isinstance(module, types.ModuleType) or type(module) is not types.ModuleType


def operators(yaml_path: Path) -> dict[str, set[str]]:
    """aten operator name -> how Python reaches it: 'function', 'method', or a python_module."""
    entries = yaml.load(yaml_path.read_text(encoding="utf-8"), Loader=_Loader)
    reach: dict[str, set[str]] = {}
    for entry in entries:
        packet = entry["func"].split("(", 1)[0].split(".", 1)[0]
        variants = {v.strip() for v in str(entry.get("variants", "function")).split(",")}
        if entry.get("python_module"):
            variants = {v if v != "function" else entry["python_module"] for v in variants}
        reach.setdefault(packet, set()).update(variants)
    return reach


def _binding_op(obj: object, reach: dict[str, set[str]], method: bool) -> str | None:
    """The operator a generated binding is, or None."""
    name = getattr(obj, "__name__", None)
    if name not in reach:
        return None
    if method:
        return name if type(obj).__name__ == "method_descriptor" and "method" in reach[name] else None
    if type(obj).__name__ != "builtin_function_or_method":
        return None
    module = getattr(obj, "__module__", None) or "torch"
    if module not in BINDING_MODULES:
        return None
    wanted = BINDING_MODULES[module]
    return name if (wanted or "function") in reach[name] else None


def _called_by_name(function: types.FunctionType, name: str, depth: int = 2) -> bool:
    """Whether `function`'s code calls `name(...)` or `x.name(...)`, itself or through a function
    of its module named after it (`adaptive_max_pool2d_with_indices`); for `boolean_dispatch`'s
    function (`F.max_pool2d`): whether both of the functions it chooses from do."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        tree = None
    called = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call):
            called.add(getattr(node.func, "attr", None) or getattr(node.func, "id", None))
    if name in called:
        return True
    helpers = [function.__globals__.get(c) for c in called if c and c.startswith(name)]
    cells = [c.cell_contents for c in function.__closure__ or () if inspect.isfunction(c.cell_contents)]
    if depth == 0:
        return False
    if any(inspect.isfunction(h) and _called_by_name(h, name, depth - 1) for h in helpers):
        return True
    return len(cells) == 2 and all(_called_by_name(c, name, depth - 1) for c in cells)


def raises_only(function: object, api: str) -> str | None:
    """The replacement a removed API's error names ("" for none), where `function` does nothing
    but raise an error that says it is removed or deprecated; else None."""
    if not inspect.isfunction(function):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # (the docstring)
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or not isinstance(body[0].exc, ast.Call):
        return None
    text = " ".join(a.value for a in body[0].exc.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    if not re.search(r"removed|deprecated", text):
        return None
    named = [n for n in re.findall(r"torch\.[\w.]*\w", text) if n != api and not api.startswith(n + ".")]
    return named[0] if named else ""


def removed(modules: list[str]) -> dict[str, str]:
    found = {}
    for name in modules:
        module = importlib.import_module(name)
        for attr in dir(module):
            api = f"{name}.{attr}"
            replacement = None if attr.startswith("_") else raises_only(getattr(module, attr, None), api)
            if replacement is not None:
                found[api] = replacement
    return dict(sorted(found.items()))


def lowers_to(modules: list[str], reach: dict[str, set[str]]) -> dict[str, str]:
    import torch

    found = {}
    for name in modules:
        module = importlib.import_module(name)
        for attr in dir(module):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr, None)
            op = _binding_op(obj, reach, method=False)
            if op is None and inspect.isfunction(obj) and attr in reach and _called_by_name(obj, attr):
                op = attr
            if op is not None:
                found[f"{name}.{attr}"] = op
    for attr in dir(torch.Tensor):
        if not attr.startswith("_"):
            op = _binding_op(getattr(torch.Tensor, attr), reach, method=True)
            if op is not None:
                found[f"torch.Tensor.{attr}"] = op
    return dict(sorted(found.items()))


def device_types() -> list[str]:
    """The device types `torch.device` accepts, as its error for one it does not lists them."""
    import torch

    try:
        torch.device("no_such_device_type")
    except RuntimeError as error:
        listed = re.match(r"Expected one of (.*?) device type", str(error))
        if listed:
            return sorted(t.strip() for t in listed.group(1).split(","))
    raise SystemExit("gen_api: torch.device's error no longer lists the device types; read them another way")


def api_data(yaml_path: Path) -> dict:
    import torch

    modules, opened = {}, []
    names = walked_modules()
    for name in names:
        modules[name], is_open = module_table(name)
        if is_open:
            opened.append(name)
    members = {}
    for dotted in WITH_MEMBERS:
        owner = importlib.import_module(dotted.rsplit(".", 1)[0])
        members[dotted] = sorted(n for n in dir(getattr(owner, dotted.rsplit(".", 1)[1])) if not n.startswith("_"))
    return {
        "package": "torch",
        "version": torch.__version__.split("+")[0],
        "generated_by": "tools/gen_api.py",
        "source": ["import torch (dir() of each walked module)", TORCH_YAML],
        "not_walked": list(NOT_WALKED),
        "open": opened,
        "modules": modules,
        "removed": removed(names),
        "device_types": device_types(),
        "members": members,
        "lowers_to": lowers_to(names, operators(yaml_path)),
    }


def dumps(data: dict) -> str:
    """One module (or API) a line: a new torch release reads as a short diff."""
    lines = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            inner = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in value.items())
            lines.append(f"{json.dumps(key)}: {{\n{inner}\n}}")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import warnings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yaml", type=Path, help="native_functions.yaml (default: the installed torchgen's)")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="the folder to write into (default: %(default)s)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # (torch's own deprecation notes as its modules are imported)
    data = api_data(args.yaml or default_torch_yaml())
    path = args.out / f"torch-api-{data['version']}.json"
    path.write_text(dumps(data), encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
