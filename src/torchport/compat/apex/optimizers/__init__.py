"""apex.optimizers on torchport.optim (and torch.optim): each class takes apex's arguments and
makes the native twin apis/apex.py names (its `OPTIMIZERS` Replacements), so the object is a
plain torch optimizer. FusedNovoGrad has no twin and is written here (fused_novograd.py, apex's math);
FusedMixedPrecisionLamb is FusedLAMB's math on the float32 weights torch.amp keeps."""

from __future__ import annotations

import inspect

from torchport.apis import apex as facts
from torchport.compat.apex import _log, _replace
from torchport.compat.apex.optimizers.fused_novograd import FusedNovoGrad

PREFIX = "apex.optimizers"


def _make(api: str, signature_of, given: dict):
    replacement = facts.OPTIMIZERS[api]
    _replace.refuse_differing(api, replacement, given)
    native = _replace.native_name(replacement, given)
    defaults = {name: p.default for name, p in inspect.signature(signature_of).parameters.items()}
    ignored = [name for name in _replace.dropped(replacement, given, defaults)
               if name not in facts.HARMLESS_OPTIMIZER_PARAMETERS and name != "set_grad_none"]
    _log.ignored(api, ignored)
    _log.same(api, native, "same arguments" if not ignored else f"{', '.join(ignored)} not kept")
    return _replace.resolve(native)(**_replace.native_arguments(replacement, given))


def _given(arguments: dict) -> dict:
    return {name: value for name, value in arguments.items() if name != "cls"}


class FusedAdam:
    """apex's FusedAdam: torchport.optim.FusedAdamW (adam_w_mode=True, apex's default) or FusedAdam."""

    def __new__(cls, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-8, adam_w_mode=True,
                weight_decay=0.0, amsgrad=False, set_grad_none=True, capturable=False, use_master=False,
                master_weights=False):
        return _make(f"{PREFIX}.FusedAdam", cls.__new__, _given(locals()))


class FusedLAMB:
    """apex's FusedLAMB: torchport.optim.FusedLamb (use_nvlamb is its always_adapt)."""

    def __new__(cls, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01,
                amsgrad=False, adam_w_mode=True, grad_averaging=True, set_grad_none=True, max_grad_norm=1.0,
                use_nvlamb=False):
        return _make(f"{PREFIX}.FusedLAMB", cls.__new__, _given(locals()))


class FusedSGD:
    """apex's FusedSGD: torchport.optim.FusedSGD."""

    def __new__(cls, params, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                wd_after_momentum=False, materialize_master_grads=True, set_grad_none=False):
        return _make(f"{PREFIX}.FusedSGD", cls.__new__, _given(locals()))


class FusedAdagrad:
    """apex's FusedAdagrad: torch.optim.Adagrad (the same update with lr_decay=0)."""

    def __new__(cls, params, lr=1e-2, eps=1e-10, weight_decay=0.0, set_grad_none=True, adagrad_w_mode=False):
        return _make(f"{PREFIX}.FusedAdagrad", cls.__new__, _given(locals()))


class FusedMixedPrecisionLamb:
    """apex's FusedMixedPrecisionLamb: with torch.amp the weights are float32 already, so it is
    FusedLAMB's math; a reduced-precision copy or a starting step have no native equivalent."""

    def __new__(cls, params, lr=1e-3, step=0, bias_correction=True, betas=(0.9, 0.999), eps=1e-6,
                weight_decay=0.01, amsgrad=False, adam_w_mode=True, grad_averaging=True, max_grad_norm=1.0,
                use_nvlamb=False, reduced_precision_dtype=None):
        api = f"{PREFIX}.FusedMixedPrecisionLamb"
        if reduced_precision_dtype is not None or step != 0:
            raise _replace.NoNativeEquivalent(
                f"{api}(reduced_precision_dtype={reduced_precision_dtype!r}, step={step!r}) has no native "
                "equivalent: torch.amp keeps float32 weights and optimizers count steps from 0; "
                f"use {PREFIX}.FusedLAMB's arguments")
        given = {k: v for k, v in _given(locals()).items() if k not in ("step", "reduced_precision_dtype", "api")}
        return _make(f"{PREFIX}.FusedLAMB", FusedLAMB.__new__, given)


def _npu_twin(name: str):
    """Ascend apex's NpuFused* optimizer: torchport.optim's class of that name, same arguments."""
    api = f"{PREFIX}.{name}"

    def __new__(cls, *args, **kwargs):
        native = facts.OPTIMIZERS[api].native
        _log.same(api, native)
        return _replace.resolve(native)(*args, **kwargs)

    return type(name, (), {"__new__": __new__, "__doc__": _npu_twin.__doc__.replace("NpuFused*", name),
                           "__module__": __name__})


for _name in facts.NPU_FUSED:
    globals()[_name] = _npu_twin(_name)

__all__ = ["FusedAdam", "FusedLAMB", "FusedSGD", "FusedAdagrad", "FusedNovoGrad", "FusedMixedPrecisionLamb",
           *facts.NPU_FUSED]
