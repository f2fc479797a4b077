"""`torchport run --amp`: mixed precision for an unmodified script that trains in float32, as
`migrate --amp torch` writes it. The outermost forward of a module in training mode runs under
autocast (the target's half dtype), and where that dtype is float16 a GradScaler stands around
backward and step: a scalar's `.backward()` is scaled, the gradients are unscaled before they are
clipped or stepped, a step whose gradients hold inf/nan is skipped, and the scale is updated after
each step. A script with mixed precision of its own (an autocast it enters, a GradScaler it makes)
keeps it: from then on nothing is added. Off where the target has no fast half precision (a CPU
without native bfloat16), with a line in the log saying so."""

from __future__ import annotations

import functools
import threading
import weakref

from torchport.apis.amp import GRADIENT_CLIPS
from torchport.targets.verdict import Kind, Verdict

AMP_ENV = "TORCHPORT_AMP"  # "torch": the processes a run starts (torchrun's ranks) add AMP too
NN_UTILS = ("torch.nn.utils", "torch.nn.utils.clip_grad")


class _State(threading.local):
    depth = 0  # module calls open on this thread
    context = None  # the autocast entered at the outermost training forward


class AutoMixedPrecision:
    def __init__(self, session) -> None:
        import torch

        self.session = session
        self.device_type = session.device_type
        self.dtype = session.autocast_dtype(torch.float16)
        self.scaler = torch.amp.GradScaler(self.device_type) if self.dtype == torch.float16 else None
        self.state = _State()
        self.own = False  # the script's own AMP was seen: add nothing from then on
        self.optimizers: weakref.WeakSet = weakref.WeakSet()
        self.scaled = False  # a backward was scaled since the last step
        self.unscaled: set[int] = set()  # the optimizers unscaled since
        self.stepping = 0  # optimizer steps open: a closure's backward inside one (LBFGS) is not scaled
        self.verdicts = {}

    def install(self, book) -> None:
        import torch
        from torch.nn.modules import module
        from torch.optim import optimizer

        handles = [module.register_module_forward_pre_hook(self._enter),
                   module.register_module_forward_hook(self._leave, always_call=True),
                   optimizer.register_optimizer_step_pre_hook(self._before_step),
                   optimizer.register_optimizer_step_post_hook(self._after_step)]
        book.on_restore(lambda: [handle.remove() for handle in handles])
        self._watch_own_amp(book, torch)
        if self.scaler is None:
            return
        book.replace(torch.Tensor, "backward", self._backward(torch.Tensor.backward))
        book.replace(torch.optim.Optimizer, "__init__", self._tracked(torch.optim.Optimizer.__init__))
        for name in ("clip_grad_norm_", "clip_grad_value_"):
            original = getattr(torch.nn.utils, name)
            book.replace_everywhere([torch.nn.utils, torch.nn.utils.clip_grad], name, original, self._clip(original))

    def _note(self, key: str, api: str, replacement: str, note: str) -> None:
        if key not in self.verdicts:
            self.verdicts[key] = Verdict(api, Kind.ADAPTED, replacement, note)
        self.session.log.note(self.verdicts[key], depth=3)

    # -- the script's own AMP -------------------------------------------------------------------
    def _watch_own_amp(self, book, torch) -> None:
        scaler_init = torch.amp.GradScaler.__init__
        mine = self

        @functools.wraps(scaler_init)
        def __init__(scaler, *args, **kwargs):
            if mine.scaler is not None and scaler is not mine.scaler and not mine.own:
                mine._stand_down("the script makes a GradScaler of its own")
            scaler_init(scaler, *args, **kwargs)

        book.replace(torch.amp.GradScaler, "__init__", __init__)

    def _stand_down(self, why: str) -> None:
        self.own = True
        self._note("own", "run --amp", "the script's own mixed precision", f"nothing added from here on: {why}")

    # -- autocast around the outermost training forward ----------------------------------------
    def _enter(self, module, inputs) -> None:
        import torch

        state = self.state
        state.depth += 1
        if state.depth != 1 or self.own or not module.training or not torch.is_grad_enabled():
            return
        if torch.is_autocast_enabled(self.device_type):
            self._stand_down("its forward runs under an autocast it entered")
            return
        state.context = torch.autocast(self.device_type, dtype=self.dtype)
        state.context.__enter__()
        self._note(type(module).__name__, f"{type(module).__name__}.forward (training)",
                   f"torch.autocast({self.device_type!r}, dtype={self.dtype})", "run --amp: the forward pass in half precision")

    def _leave(self, module, inputs, output) -> None:
        state = self.state
        state.depth = max(state.depth - 1, 0)
        if state.depth == 0 and state.context is not None:
            context, state.context = state.context, None
            context.__exit__(None, None, None)

    # -- the GradScaler around backward and step ----------------------------------------------
    def _tracked(self, original):
        optimizers = self.optimizers

        @functools.wraps(original)
        def __init__(optimizer, *args, **kwargs):
            original(optimizer, *args, **kwargs)
            optimizers.add(optimizer)

        return __init__

    def _backward(self, original):
        mine = self

        @functools.wraps(original)
        def backward(tensor, *args, **kwargs):
            if mine.own or mine.stepping or tensor.numel() != 1 or not tensor.dtype.is_floating_point \
                    or not tensor.requires_grad:
                return original(tensor, *args, **kwargs)
            mine.scaled = True
            mine._note("backward", "Tensor.backward", "scaler.scale(loss).backward()",
                       "run --amp: the loss scaled so float16 gradients do not underflow")
            return original(mine.scaler.scale(tensor), *args, **kwargs)

        return backward

    def _unscale(self, optimizer) -> None:
        if self.scaled and id(optimizer) not in self.unscaled:
            self.unscaled.add(id(optimizer))
            self.scaler.unscale_(optimizer)

    def _clip(self, original):
        mine = self

        @functools.wraps(original)
        def clip(parameters, *args, **kwargs):
            import torch

            if mine.scaled and not mine.own:
                parameters = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
                wanted = {id(p) for p in parameters}
                for optimizer in list(mine.optimizers):
                    if any(id(p) in wanted for group in optimizer.param_groups for p in group["params"]):
                        mine._unscale(optimizer)
            return original(parameters, *args, **kwargs)

        return clip

    def _before_step(self, optimizer, args, kwargs) -> None:
        self.stepping += 1
        if self.scaler is None or not self.scaled or self.own:
            return
        self._unscale(optimizer)
        state = self.scaler._per_optimizer_states[id(optimizer)]  # (torch's own record of what unscale_ found)
        if sum(v.item() for v in state["found_inf_per_device"].values()):
            for group in optimizer.param_groups:  # (a step over no gradient changes nothing: skipped, as scaler.step skips it)
                for parameter in group["params"]:
                    parameter.grad = None

    def _after_step(self, optimizer, args, kwargs) -> None:
        self.stepping = max(self.stepping - 1, 0)
        if self.scaler is None or not self.scaled or self.own or id(optimizer) not in self.unscaled:
            return
        self.scaler.update()
        self.scaled = False
        self.unscaled.clear()


def install(session) -> AutoMixedPrecision | None:
    """AMP for the session's target, where it has a fast half precision (None, logged, where not);
    once per session."""
    if getattr(session, "amp", None) is not None:
        return session.amp
    if not session.autocast_allowed():
        session.log.note(Verdict("run --amp", Kind.NOOP, "", f"off: this {session.device_type} has no native "
                                                             "bfloat16, float32 is faster"), depth=2)
        return None
    amp = session.amp = AutoMixedPrecision(session)
    amp.install(session.book)
    return amp


def install_from_environment(session) -> None:
    import os

    if os.environ.get(AMP_ENV, "") == "torch":
        install(session)
