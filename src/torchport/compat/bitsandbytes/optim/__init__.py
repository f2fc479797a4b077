"""bitsandbytes.optim: each optimizer apis/kernels_llm.BNB_OPTIMIZERS names, as a subclass of the
torch optimizer that computes its update in 32 bits (Lion: lion.Lion, torch has none). Constructed
with bitsandbytes' parameters (by position or name, bitsandbytes' defaults); its quantisation and
paging knobs change memory only and are dropped, except percentile_clipping below 100 (gradient
clipping), which is refused."""

from __future__ import annotations

import importlib
import inspect

from torchport.apis.kernels_llm import BITSANDBYTES, BNB_OPTIMIZERS
from torchport.compat import _kernels_log
from torchport.compat._kernels_log import module_getattr
from torchport.compat.bitsandbytes.optim.lion import Lion as _Lion

MODULE = f"{BITSANDBYTES}.optim"


def _native(name: str):
    if name == "Lion":
        return _Lion
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


def _stand_in(name: str, spec):
    native = _native(spec.native)
    signature = inspect.Signature([inspect.Parameter("params", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        for parameter, default in spec.parameters])
    memory = ("its 8-bit state kept in 32 bits: optimizer state memory grows 4x" if spec.bits == 8
              else "the same 32-bit state")
    note = f"the same update; {memory}{', not paged to host memory' if spec.paged else ''}"

    def __init__(self, *args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        if arguments.get("percentile_clipping", 100) < 100:
            raise NotImplementedError(f"{MODULE}.{name}(percentile_clipping=...): bitsandbytes' adaptive "
                                      "gradient clipping has no stand-in: clip with torch.nn.utils.clip_grad_norm_")
        if arguments.get("lr") is None:
            raise TypeError(f"{MODULE}.{name}: give lr")
        _kernels_log.adapted(f"{MODULE}.{name}", spec.native if spec.native != "Lion" else f"{__name__}.Lion", note)
        native.__init__(self, arguments["params"], **{key: arguments[key] for key in spec.passed})

    return type(name, (native,), {"__init__": __init__, "__signature__": signature, "__module__": __name__,
                                  "__doc__": f"bitsandbytes' {name} as {spec.native}: {note}."})


globals().update({name: _stand_in(name, spec) for name, spec in BNB_OPTIMIZERS.items()})


class GlobalOptimManager:
    """bitsandbytes' per-parameter overrides (optim_bits=32 for an embedding...): every state is
    32-bit here already, so registering one changes nothing."""

    _instance = None

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def initialize(self):
        pass

    def register_parameters(self, params):
        pass

    def override_config(self, parameters, key=None, value=None, key_value_dict=None):
        pass

    def register_module_override(self, module, param_name, config):
        pass


__all__ = [*BNB_OPTIMIZERS, "GlobalOptimManager"]

__getattr__ = module_getattr(MODULE, __name__)
