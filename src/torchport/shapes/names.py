"""The name a report gives a torch callable, and the calls it leaves out.

`__torch_function__` receives what was called: `torch._C._nn.linear` for `F.linear`,
`TensorBase.add` for `x + 1`, `linalg_norm` for `torch.linalg.norm`. The report names the public
spelling (`torch.nn.functional.linear`, `torch.Tensor.add`, `torch.linalg.norm`), found once per
callable. Left out, as by Ascend's hook: conversions and copies that launch no shape-specific
kernel (`to`, `cpu`, `detach`, `clone`, ...), `torch.nn.init.*`, and besides what only reads
metadata (`size`, `dim`, attribute reads such as `x.shape`), which would be most of the calls.
"""

from __future__ import annotations

SKIP = None  # the name of a call that is not recorded

# Ascend's exclusions (msft_dynamic_analysis/hook.py) ...
_ASCEND_SKIPPED = {"cpu", "cuda", "long", "float", "int", "detach", "to", "contiguous", "type",
                   "requires_grad_", "clone", "numpy"}
# ... and the calls that only read a tensor's metadata or turn it into Python values.
METADATA = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset", "is_contiguous",
    "is_floating_point", "is_complex", "data_ptr", "element_size", "get_device", "item", "tolist",
    "__len__", "__repr__", "__format__", "__hash__", "__bool__", "__int__", "__float__", "__index__",
    "__array__", "__reduce_ex__", "__deepcopy__", "__setstate__", "__get__", "__set__", "__delete__",
    "register_hook", "retain_grad", "backward_hook"})
_SKIPPED_METHODS = frozenset(_ASCEND_SKIPPED | METADATA)

# Where torch's C functions are published under another spelling: (C module, prefix) -> public module.
_PREFIXED = {
    ("torch._C._linalg", "linalg_"): "torch.linalg",
    ("torch._C._fft", "fft_"): "torch.fft",
    ("torch._C._special", "special_"): "torch.special",
    ("torch._C._nested", "nested_"): "torch.nested",
}
_PUBLIC_MODULES = ("torch.nn.functional", "torch.nn.utils.rnn", "torch.nn.init")


class Names:
    """Callable -> report name (or SKIP), decided once per callable. `skipped`: the short names
    (Tensor methods, torch.* functions) left out; by default Ascend's and the metadata reads."""

    def __init__(self, skipped: frozenset[str] = _SKIPPED_METHODS) -> None:
        self.known: dict = {}  # callable -> name or SKIP: read directly by the capture's hot path
        self.skipped = skipped
        self._published: dict[int, str] | None = None

    def of(self, func) -> str | None:
        try:
            return self.known[func]
        except KeyError:
            pass
        except TypeError:  # an unhashable callable: named each time
            return self._name(func)
        name = self.known[func] = self._name(func)
        return name

    def _name(self, func) -> str | None:
        short = getattr(func, "__name__", None) or type(func).__name__
        module = getattr(func, "__module__", None)
        qualname = getattr(func, "__qualname__", "") or short
        objclass = getattr(func, "__objclass__", None)
        if objclass is not None or qualname.startswith(("TensorBase.", "Tensor.")):
            if objclass is not None and objclass.__name__ not in ("TensorBase", "Tensor"):
                return SKIP  # a descriptor's __get__/__set__: an attribute read such as x.shape
            return SKIP if short in self.skipped else f"torch.Tensor.{short}"
        if short in self.skipped and module in ("torch", "torch._C._VariableFunctions", None):
            return SKIP
        name = self._published_name(func) or self._prefixed_name(module, short) or _dotted(module, short)
        return SKIP if name.startswith("torch.nn.init.") else name

    def _published_name(self, func) -> str | None:
        if self._published is None:
            self._published = _published_names()
        return self._published.get(id(func))

    @staticmethod
    def _prefixed_name(module: str | None, short: str) -> str | None:
        for (c_module, prefix), public in _PREFIXED.items():
            if module == c_module and short.startswith(prefix):
                return f"{public}.{short[len(prefix):]}"
        return None


def _dotted(module: str | None, short: str) -> str:
    if module in (None, "torch._C._VariableFunctions"):
        module = "torch"
    return f"{module}.{short}"


def _published_names() -> dict[int, str]:
    """id(callable) -> its public name, for the modules whose functions torch implements in C or
    elsewhere (`torch.nn.functional.linear` is `torch._C._nn.linear`)."""
    import importlib

    published: dict[int, str] = {}
    for module_name in _PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for attribute, value in vars(module).items():
            if callable(value) and not attribute.startswith("_") and not isinstance(value, type):
                published.setdefault(id(value), f"{module_name}.{attribute}")
    return published
