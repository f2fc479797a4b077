"""Which backend has a kernel for which aten operator, from data generated from the real wheels.

The data (tools/gen_kernels.py, committed under torchport/targets/data/) is read without
importing torch. A backend supports an overload when
  - the target's own package registers it (torch_npu: the target's `Kernels.own_data`);
  - it is composite (CompositeImplicitAutograd or CompositeExplicitAutograd[NonFunctional]): one
    kernel serves every backend, the ops it calls are recorded and checked on their own;
  - it inherits (structured_delegate, autogen) from an overload the backend supports;
  - its `dispatch:` section names the backend's key.
What the targets say of their kernels (targets/kernels.py) decides the rest: a backend whose
kernels torch lists only in part (XPU: intel/torch-xpu-ops registers the rest), or one no data
lists (a target that names no kernel data), gets None (unknown) where the data cannot say,
never a guess.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property, lru_cache

from torchport import targets
from torchport.targets.kernels import CUDA, Kernels
from torchport.targets.surface import TORCH_KERNELS, load


@dataclass(frozen=True)
class Support:
    """One backend's answer for one overload: True, False or None (the data cannot say), and why."""

    supported: bool | None
    how: str


@dataclass(frozen=True)
class OwnKernels:
    """What a target's own package registers beside torch's kernels (torch_npu's data)."""

    package: str  # "torch_npu"
    version: str
    kernels: frozenset[str]  # the aten overloads it has kernels for
    custom: frozenset[str]  # its own operators, in the target's `Kernels.namespace`
    namespace: str | None

    @property
    def label(self) -> str:
        return f"{self.package} {self.version}"

    @classmethod
    def read(cls, data: dict, namespace: str | None) -> "OwnKernels":
        return cls(data["package"], data["version"], frozenset(data["kernels"]), frozenset(data["custom"]), namespace)


class KernelData:
    def __init__(self, torch_data: dict, backends: dict[str, Kernels] | None = None,
                 own: dict[str, OwnKernels] | None = None):
        """`backends`: dispatch key -> what its target says of its kernels; `own`: dispatch key ->
        the kernels its target's own package registers."""
        self.torch_version = torch_data["version"]
        self.implicit = frozenset(torch_data["composite_implicit"])
        self.explicit = frozenset(torch_data["composite_explicit"])
        self.inherits: dict[str, str] = torch_data["inherits"]
        self.kernels: dict[str, list[str]] = torch_data["kernels"]
        self.arity: dict[str, int] = torch_data["arity"]
        self.out_variants = frozenset(torch_data["out_variants"])
        self.backends = dict(backends or {})
        self.own = dict(own or {})

    @cached_property
    def _overloads(self) -> dict[str, list[str]]:
        by_packet = defaultdict(list)
        for name in (*self.implicit, *self.explicit, *self.inherits, *self.kernels):
            by_packet[name.split(".", 1)[0]].append(name)
        return {packet: sorted(names) for packet, names in by_packet.items()}

    def overloads(self, packet: str) -> list[str]:
        """Every overload of an aten operator: 'add' -> ['add.Scalar', 'add.Scalar_out', ...]."""
        return self._overloads.get(packet, [])

    def packets(self) -> list[str]:
        """Every aten operator's name ('addmm')."""
        return list(self._overloads)

    def knows(self, packet: str) -> bool:
        return packet in self._overloads

    def is_implicit(self, op: str, arities: set[int] = frozenset(), overload: str | None = None) -> bool:
        """Whether no backend ever runs a call of `op` ('aten::linear'): the overload it is (or
        every one it can be, see `candidates`) is CompositeImplicitAutograd, which autograd
        rewrites into other ops first."""
        namespace, _, packet = op.rpartition("::")
        if namespace != "aten" or not self.knows(packet):
            return False
        if overload is not None:
            return self.overload_name(packet, overload) in self.implicit
        return all(name in self.implicit for name in self.candidates(packet, set(arities)))

    def candidates(self, packet: str, arities: set[int]) -> list[str]:
        """The overloads a call of `packet` can be when only the operator is known: those taking
        as many arguments as the profiler printed shapes for (out= variants only when nothing else
        fits); without shapes, the default overload, else every one but the out= variants."""
        overloads = self.overloads(packet)
        fitting = [name for name in overloads if self.arity.get(name) in arities]
        plain = [name for name in fitting if name not in self.out_variants]
        if plain or fitting:
            return plain or fitting
        if packet in overloads:
            return [packet]
        return [name for name in overloads if name not in self.out_variants] or overloads

    def sole_backend(self, overload: str) -> str | None:
        """The one backend with a kernel for `overload` when there is just one ('CUDA' for
        cudnn_convolution): such an op is that backend's own path, chosen by an op above it."""
        while overload in self.inherits:
            overload = self.inherits[overload]
        keys = self.kernels.get(overload) or []
        return keys[0] if len(keys) == 1 else None

    def own_kernel(self, op: str, backend: str) -> bool:
        """Whether `backend` runs `op` ('aten::_convolution') with a kernel of its own, not a
        composite one: the ops it was seen calling elsewhere are then not called there."""
        namespace, _, packet = op.rpartition("::")
        overloads = self.candidates(packet, set()) if namespace == "aten" else []
        return bool(overloads) and all(self._own(name, backend) for name in overloads)

    def _own(self, overload: str, backend: str) -> bool:
        seen = set()
        own = self.own.get(backend)
        while True:
            if own is not None and overload in own.kernels:
                return True
            if overload not in self.inherits or overload in seen:
                return backend in self.kernels.get(overload, [])
            seen.add(overload)
            overload = self.inherits[overload]

    def overload_name(self, packet: str, overload: str) -> str:
        """The data's name of an overload: ('addmm', 'default') -> 'addmm'."""
        return packet if overload in ("default", "") else f"{packet}.{overload}"

    def support(self, overload: str, backend: str) -> Support:
        """Whether `backend` ('CPU', 'CUDA', 'MPS', 'XPU', 'NPU') runs aten overload `overload`."""
        seen = []
        own = self.own.get(backend)
        while True:
            if own is not None and overload in own.kernels:
                return Support(True, f"{own.label} kernel")
            if overload in self.implicit or overload in self.explicit:
                return Support(True, "composite")
            if overload in self.inherits and overload not in seen:
                seen.append(overload)
                overload = self.inherits[overload]
                continue
            return self._listed(overload, backend)

    def _listed(self, overload: str, backend: str) -> Support:
        if overload not in self.kernels:
            return Support(None, f"not an operator of torch {self.torch_version}")
        if backend in self.kernels[overload]:
            return Support(True, f"{backend} kernel")
        if backend in self.own:
            return Support(False, f"not in {self.own[backend].label}'s kernels")
        if backend not in self.backends:
            return Support(None, f"no kernel data for {backend}: torch {self.torch_version} lists none, "
                                 "and its target names none of its own")
        elsewhere = self.backends[backend].listed_elsewhere
        if elsewhere and self.kernels[overload]:
            return Support(None, f"{backend} kernels are registered by {elsewhere}, not in these data")
        return Support(False, f"no {backend} kernel in torch {self.torch_version}")

    def operator_support(self, packet: str, backend: str) -> Support:
        """Whether `backend` runs aten operator `packet` ('var_mean') whichever overload a call is:
        False only where no overload but the out= variants has a kernel there and the data says
        so of each; True where one has; None where the data cannot say of some and none has."""
        answers = [self.support(name, backend) for name in self.overloads(packet) if name not in self.out_variants]
        if not answers:
            return Support(None, f"not an operator of torch {self.torch_version}")
        if any(a.supported for a in answers):
            return next(a for a in answers if a.supported)
        unknown = [a for a in answers if a.supported is None]
        return unknown[0] if unknown else answers[0]

    def custom_support(self, namespace: str, packet: str, backend: str) -> Support:
        """A package's own operators (npu::npu_fusion_attention) exist only on its target's device."""
        for key, own in self.own.items():
            if namespace == own.namespace and (packet in own.custom or any(n.split(".")[0] == packet for n in own.custom)):
                if backend == key:
                    return Support(True, f"{own.label} operator")
                return Support(False, f"a {own.package} operator: exists only on the {key}")
        packages = "".join(f" or {own.package}" for own in self.own.values() if own.namespace)
        return Support(None, f"not an aten{packages} operator ({namespace}::)")

    def without_kernel(self, backend: str) -> str:
        """What happens to an op `backend` has no kernel for ("" where its target does not say)."""
        kernels = self.backends.get(backend)
        return kernels.without_kernel if kernels is not None else ""


@lru_cache(maxsize=None)
def default() -> KernelData:
    """torch's kernel data, with what every target (and CUDA, where the code comes from) says of its own."""
    return of([CUDA, *(t.kernels for t in targets.all_targets().values() if t.kernels is not None)])


def of(listed: list[Kernels]) -> KernelData:
    """torch's kernel data, with what these backends say of theirs (and the data they name)."""
    own = {k.key: OwnKernels.read(load(k.own_data, k.data_package), k.namespace) for k in listed if k.own_data}
    return KernelData(load(TORCH_KERNELS), {k.key: k for k in listed}, own)
