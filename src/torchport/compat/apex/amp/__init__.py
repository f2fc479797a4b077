"""apex.amp on torch.amp, for any device: `initialize`, `scale_loss`, `master_params`,
`state_dict`/`load_state_dict`, the function registrations (no-ops) and `disable_casts`.

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()          # gradients unscaled on exit (GradScaler.unscale_)
    optimizer.step()                    # through the GradScaler: skipped on inf/nan

What apex's opt levels mean natively is apis/apex.py's (OPT_LEVELS); each loss scale is a
torch.amp.GradScaler (`_scale.LossScale`); the model side is `_forward`. Differences from apex:
the model's weights stay float32 (autocast, not a half model with master weights), so
`master_weights`, `keep_batchnorm_fp32` (O1/O2) and `patch_torch_functions` change nothing;
a static loss scale other than 1.0 skips a step with inf/nan gradients and halves (GradScaler's
rule; apex steps anyway); `delay_overflow_check` is accepted, the check is made at the step.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections import OrderedDict

import torch

from torchport.apis import apex as facts
from torchport.compat.apex import _log, _targets
from torchport.compat.apex.amp import _forward
from torchport.compat.apex.amp._scale import LossScale

__all__ = ["initialize", "scale_loss", "master_params", "state_dict", "load_state_dict", "disable_casts",
           "register_half_function", "register_float_function", "register_promote_function",
           "half_function", "float_function", "promote_function"]

_NOT_INITIALIZED = ("Invoked 'with amp.scale_loss`, but internal Amp state has not been initialized.  "
                    "model, optimizer = amp.initialize(model, optimizer, opt_level=...) must be called "
                    "before `with amp.scale_loss`.")


class _State:
    """What one `amp.initialize` set up (apex keeps it global: the latest call is in force)."""

    def __init__(self, enabled: bool, opt_level: str, scales: list[LossScale], device_type: str):
        self.enabled, self.opt_level, self.scales, self.device_type = enabled, opt_level, scales, device_type


class _Stash:
    """Per optimizer: the loss scale its gradients carry (None: step as it is), and whether the
    scaler is stepping it now (GradScaler.step calls `optimizer.step` itself)."""

    def __init__(self):
        self.scale = None
        self.inside = False


_state: _State | None = None
__version__ = "0.1"  # (apex.amp's own; scripts import it to tell the new API from the old)


class _AmpState:
    """`apex.amp._amp_state`, which scripts read for the current loss scale
    (`_amp_state.loss_scalers[0].loss_scale()`) and the options in force."""

    @property
    def loss_scalers(self) -> list:
        return _state.scales if _state is not None else []

    @property
    def opt_properties(self):
        return types.SimpleNamespace(enabled=_state.enabled, opt_level=_state.opt_level) if _state else None

    verbosity = 1


_amp_state = _AmpState()


def initialize(models, optimizers=None, enabled=True, opt_level=facts.DEFAULT_OPT_LEVEL, cast_model_type=None,
               patch_torch_functions=None, keep_batchnorm_fp32=None, master_weights=None, loss_scale=None,
               cast_model_outputs=None, num_losses=1, verbosity=1, min_loss_scale=None, max_loss_scale=2.0**24,
               combine_grad=None, combine_ddp=None, ddp_replica_count=None, check_combined_tensors=None,
               user_cast_preferred=None):
    """apex's `amp.initialize`: models and optimizers come back in the structure given."""
    global _state
    model_list, optimizer_list = _as_list(models, "models"), _optimizers(optimizers)
    device_type = _targets.device_type_of(*model_list, *optimizer_list)
    if not enabled:
        _state = _State(False, opt_level, [], device_type)
        return _returned(models, optimizers, model_list, optimizer_list)
    if opt_level not in facts.OPT_LEVELS:
        raise RuntimeError(f"Unexpected optimization level {opt_level}. Options are 'O0', 'O1', 'O2', 'O3'.  Note "
                           "that in `O0`, `O1`, etc., the prefix O is the letter O, not the number zero.")
    _refuse_parallel_wrappers(model_list)
    level = facts.OPT_LEVELS[opt_level]
    for model in model_list:
        if level.autocast:
            _forward.run_under_autocast(model, cast_model_outputs)
        elif level.cast_model:
            _forward.cast_to_half(model, cast_model_type or torch.float16, keep_batchnorm_fp32 in (True, "True"),
                                  cast_model_outputs)
        elif cast_model_outputs is not None:
            _forward.cast_outputs(model, cast_model_outputs)
    scale = _loss_scale(level, loss_scale)
    scales = [LossScale(i, device_type, scale, min_loss_scale, max_loss_scale, verbosity > 0) for i in range(num_losses)]
    _state = _State(True, opt_level, scales, device_type)
    for optimizer in optimizer_list:
        _patch_step(optimizer)
    _log.adapted(facts.INITIALIZE, "torch.autocast + torch.amp.GradScaler", _describe(level, opt_level, device_type, scale))
    return _returned(models, optimizers, model_list, optimizer_list)


def scale_loss(loss, optimizers, loss_id=0, model=None, delay_unscale=False, delay_overflow_check=False):
    """A context that yields the loss times the current scale; on exit (unless `delay_unscale`)
    the gradients of `optimizers` are unscaled, so that clipping sees true gradients, and their
    next step goes through the scaler."""
    if _state is None:
        raise RuntimeError(_NOT_INITIALIZED)
    _log.adapted(facts.SCALE_LOSS, "torch.amp.GradScaler.scale", "gradients unscaled on exit (GradScaler.unscale_)")
    return _scaled(loss, optimizers, loss_id, delay_unscale)


@contextlib.contextmanager
def _scaled(loss, optimizers, loss_id, delay_unscale):
    if not _state.enabled:
        yield loss
        return
    if not 0 <= loss_id < len(_state.scales):
        raise RuntimeError(f"amp.scale_loss(loss_id={loss_id}): amp.initialize made {len(_state.scales)} loss "
                           f"scale(s) (num_losses={len(_state.scales)})")
    scale = _state.scales[loss_id]
    if not scale.enabled:
        yield loss.float()
        return
    optimizer_list = _optimizers(optimizers)
    for optimizer in optimizer_list:
        if not hasattr(optimizer, "_torchport_amp"):
            raise RuntimeError("amp.scale_loss: an optimizer that amp.initialize did not return (pass the optimizers "
                               "to amp.initialize and use the ones it returns)")
    scale.begin(optimizer_list)
    yield scale.scale(loss)
    if not delay_unscale:
        scale.end(optimizer_list)


def master_params(optimizer):
    """The parameters the optimizer steps: with torch.amp the model's own (float32) ones."""
    _log.same(facts.MASTER_PARAMS, "optimizer.param_groups[*]['params']", "unscaled when scale_loss exits")
    for group in optimizer.param_groups:
        yield from group["params"]


def state_dict(destination=None):
    """apex's format: {"loss_scaler0": {"loss_scale": ..., "unskipped": ...}, ...}."""
    scales = _initialized("amp.state_dict").scales
    _log.adapted(facts.STATE_DICT, "torch.amp.GradScaler.state_dict", "in apex's format (loss_scale, unskipped)")
    destination = OrderedDict() if destination is None else destination
    for scale in scales:
        destination[f"loss_scaler{scale.index}"] = scale.state()
    return destination


def load_state_dict(state_dict):
    """Load apex's format, or a torch.amp.GradScaler's state_dict (into the first loss scale)."""
    scales = _initialized("amp.load_state_dict").scales
    _log.adapted(facts.LOAD_STATE_DICT, "torch.amp.GradScaler.load_state_dict", "apex's format or GradScaler's")
    if "scale" in state_dict and "_growth_tracker" in state_dict:
        if scales:
            scales[0].load(state_dict)
        return
    if len(state_dict) != len(scales):
        print(f"Warning: state_dict contains {len(state_dict)} entries, while {len(scales)} loss_scalers are used")
    unexpected = [key for key in state_dict if "loss_scaler" not in key]
    if unexpected:
        raise RuntimeError("Error(s) in loading state_dict. Unexpected key(s) in state_dict: "
                           + ", ".join(f'"{key}"' for key in unexpected) + ". ")
    for scale, key in zip(scales, state_dict):
        scale.load(state_dict[key])


def disable_casts():
    """A context whose code runs in full precision: autocast off on the models' device."""
    _log.same(facts.DISABLE_CASTS, "torch.autocast(enabled=False)")
    device_type = _state.device_type if _state is not None else _targets.device_type_of()
    return torch.autocast(device_type, enabled=False)


def _registration(name: str):
    def register(module, function_name):
        _log.noop(f"{facts.AMP}.{name}", "native autocast keeps its own op lists")

    register.__name__ = name
    return register


def _decorator(name: str):
    def decorate(function):
        _log.noop(f"{facts.AMP}.{name}", "native autocast keeps its own op lists")
        return function

    decorate.__name__ = name
    return decorate


register_half_function = _registration("register_half_function")
register_float_function = _registration("register_float_function")
register_promote_function = _registration("register_promote_function")
half_function = _decorator("half_function")
float_function = _decorator("float_function")
promote_function = _decorator("promote_function")


# -- helpers ---------------------------------------------------------------------------------

def _as_list(value, what: str) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, torch.nn.Module):
        return [value]
    raise TypeError(f"{what} must be either a single model or a list of models.")


def _optimizers(optimizers) -> list:
    if optimizers is None:
        return []
    if isinstance(optimizers, (list, tuple)):
        return list(optimizers)
    if hasattr(optimizers, "param_groups") and hasattr(optimizers, "step"):
        return [optimizers]
    raise TypeError("optimizers must be either a single optimizer or a list of optimizers.")


def _returned(models, optimizers, model_list, optimizer_list):
    if optimizers is None:
        return models
    return models, (type(optimizers)(optimizer_list) if isinstance(optimizers, (list, tuple)) else optimizer_list[0])


def _refuse_parallel_wrappers(models) -> None:
    for model in models:
        if isinstance(model, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
            raise RuntimeError(f"Incoming model is an instance of {type(model).__name__}. Parallel wrappers should "
                               "only be applied to the model(s) AFTER \nthe model(s) have been returned from amp.initialize.")


def _loss_scale(level, loss_scale):
    if loss_scale is None:
        return level.loss_scale
    return facts.DYNAMIC if loss_scale == facts.DYNAMIC else float(loss_scale)


def _patch_step(optimizer) -> None:
    """`optimizer.step` steps through the loss scale its gradients carry (a bound method, as
    torch's LR schedulers expect when they wrap it)."""
    if hasattr(optimizer, "_torchport_amp"):
        return
    stash = optimizer._torchport_amp = _Stash()
    original = optimizer.step

    @functools.wraps(original, updated=())
    def step(self, *args, **kwargs):
        scale = stash.scale
        if stash.inside or scale is None:
            return original(*args, **kwargs)
        _log.same("optimizer.step() after amp.initialize", "torch.amp.GradScaler.step(optimizer); .update()")
        stash.inside = True
        try:
            return scale.step(self, args, kwargs)
        finally:
            stash.inside = False

    optimizer.step = types.MethodType(step, optimizer)


def _initialized(what: str) -> _State:
    if _state is None:
        raise RuntimeError(f"{what}() before amp.initialize(): there is no loss scale yet")
    return _state


def _describe(level, opt_level: str, device_type: str, scale) -> str:
    scaling = "dynamic loss scale" if scale == facts.DYNAMIC else f"static loss scale {scale}"
    if level.autocast:
        dtype = _targets.half_dtype(device_type)
        where = f"forward under torch.autocast({device_type!r}, {dtype})"
        if not _targets.autocast_allowed(device_type):
            where += f" (off: no native {dtype} here, float32 is faster)"
    elif level.cast_model:
        where = f"model cast to {_targets.half_dtype(device_type)}"
    else:
        where = "float32"
    return f"{opt_level}: {where}, GradScaler with a {scaling}"
