"""Which backend has a kernel for which aten operator, from data generated from the real wheels.

The data (tools/gen_kernels.py, committed under torchport/targets/data/) is read without
importing torch. A backend supports an overload when
  - torch_npu registers it (NPU only);
  - it is composite (CompositeImplicitAutograd or CompositeExplicitAutograd[NonFunctional]): one
    kernel serves every backend, the ops it calls are recorded and checked on their own;
  - it inherits (structured_delegate, autogen) from an overload the backend supports;
  - its `dispatch:` section names the backend's key.
XPU is the exception: torch 2.13 names only a few XPU kernels in native_functions.yaml, the rest
are registered by intel/torch-xpu-ops, which these data do not hold. For an op that neither
composite nor listed for XPU the answer is None (unknown), never a guess.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources

TORCH_DATA = "kernels-torch-2.13.0.json"
NPU_DATA = "kernels-torch_npu-2.14.0.json"
NPU = "NPU"
XPU = "XPU"
LISTED_ONLY_IN_PART = {XPU}  # backends whose kernels are mostly outside these data


@lru_cache(maxsize=None)
def load(filename: str) -> dict:
    return json.loads(resources.files("torchport.targets").joinpath("data", filename).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Support:
    """One backend's answer for one overload: True, False or None (the data cannot say), and why."""

    supported: bool | None
    how: str


class KernelData:
    def __init__(self, torch_data: dict, npu_data: dict):
        self.torch_version = torch_data["version"]
        self.npu_version = npu_data["version"]
        self.implicit = frozenset(torch_data["composite_implicit"])
        self.explicit = frozenset(torch_data["composite_explicit"])
        self.inherits: dict[str, str] = torch_data["inherits"]
        self.kernels: dict[str, list[str]] = torch_data["kernels"]
        self.arity: dict[str, int] = torch_data["arity"]
        self.out_variants = frozenset(torch_data["out_variants"])
        self.npu = frozenset(npu_data["kernels"])
        self.npu_custom = frozenset(npu_data["custom"])

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
        while True:
            if backend == NPU and overload in self.npu:
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
        while True:
            if backend == NPU and overload in self.npu:
                return Support(True, f"torch_npu {self.npu_version} kernel")
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
        if backend == NPU:
            return Support(False, f"not in torch_npu {self.npu_version}'s kernels")
        if backend in LISTED_ONLY_IN_PART and self.kernels[overload]:
            return Support(None, f"{backend} kernels are registered by intel/torch-xpu-ops, not in these data")
        return Support(False, f"no {backend} kernel in torch {self.torch_version}")

    def custom_support(self, namespace: str, packet: str, backend: str) -> Support:
        """torch_npu's own operators (npu::npu_fusion_attention) exist only on the NPU."""
        if namespace == "npu" and (packet in self.npu_custom or any(n.split(".")[0] == packet for n in self.npu_custom)):
            if backend == NPU:
                return Support(True, f"torch_npu {self.npu_version} operator")
            return Support(False, "a torch_npu operator: exists only on the NPU")
        return Support(None, f"not an aten or torch_npu operator ({namespace}::)")


@lru_cache(maxsize=None)
def default() -> KernelData:
    return KernelData(load(TORCH_DATA), load(NPU_DATA))
