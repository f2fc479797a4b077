"""What `torchport dump` records while the script runs, through torch's global hooks and one
TorchFunctionMode (no edit of the script): each module call's floating-point outputs, and those of
each torch call the project's own code makes (calls.py says which), the gradient that reaches each
of them in backward, the loss (a one-element tensor whose backward() is called) and every
parameter's gradient norm before each optimizer step. With `tensors`, the whole outputs and
gradients of the modules whose path matches one of the patterns are kept besides.

A module call is named by its path from the outermost module called (`Net.layer2.0.conv1`, as
named_modules names it), its call count in the step (a module called twice: calls 0 and 1) and the
line of the project that called it. A torch call is named by its API (`torch.nn.functional.gelu`),
the path of the module whose forward made it ("" outside any), its call count in the step within
that module, and its line. Steps are counted by optimizer steps (the most steps any one
optimizer made: a GAN's two optimizers make one step); with `steps`, the script is stopped after
that many, as `ops capture --steps` stops it."""

from __future__ import annotations

import fnmatch
import os
import sys
import weakref
from collections import Counter, deque

from torchport.precision import calls
from torchport.precision.stats import is_recorded, summary
from torchport.shapes.callsites import display_path
from torchport.targets.devices import HOST_DEVICE_TYPE


RECENT = 4  # tensors remembered, to summarise a module's output that is its last child's only once


class EnoughSteps(BaseException):
    """Raised from the optimizer hook after the last recorded step: ends the script (not an
    Exception: the script's own `except Exception` does not catch it; its `finally` blocks run)."""


_OURS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")  # torchport's own


class DumpRecorder:
    def __init__(self, steps: int | None = None, tensors: tuple[str, ...] = (), project: str | None = None) -> None:
        """`tensors`: fnmatch patterns of the module paths whose whole outputs are kept; `project`:
        the project's folder, whose files' torch calls are recorded (None: the one of `__main__`)."""
        self.max_steps = steps
        self.records: list[dict] = []
        self.samples: list = []
        self.tensors: list = []  # whole tensors, on the host, by record["tensor"]
        self.patterns = tuple(tensors)
        self.project = project
        self.steps: dict[int, dict] = {}
        self.step = 0
        self.recording = True
        self._stack: list[tuple[object, str]] = []
        self._roots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # (an id could be reused)
        self._taken: Counter = Counter()
        self._recent: deque = deque(maxlen=RECENT)
        self._children: dict[tuple[int, int], str] = {}
        self._parameters: dict[int, str] = {}
        self._calls: Counter = Counter()
        self._api_calls: Counter = Counter()
        self.unrecorded: Counter = Counter()  # API -> the calls that could not be recorded
        self._kept: dict[str, bool] = {}
        self._shown: dict[str, str] = {}
        self._made: Counter = Counter()
        self._undo: list = []
        self._mode = None
        self._lifted = False
        self._in_backward = False
        self.autocast_dtypes: set[str] = set()

    # -- installing
    def __enter__(self) -> "DumpRecorder":
        import torch
        from torch.nn.modules import module as modules
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        handles = [modules.register_module_forward_pre_hook(self._entered),
                   modules.register_module_forward_hook(self._left, always_call=True),
                   register_optimizer_step_pre_hook(self._before_step),
                   register_optimizer_step_post_hook(self._after_step)]
        self._undo = [handle.remove for handle in handles]
        self._quiet = _Quiet.made_for(torch)
        self._tensor_type = torch.Tensor
        self._pid = os.getpid()
        backward = torch.Tensor.backward
        recorder = self

        def recorded_backward(tensor, *args, **kwargs):
            if recorder._in_backward:  # (backward hands itself to the mode, which calls it again)
                return backward(tensor, *args, **kwargs)
            with recorder._quiet():
                if recorder.recording and tensor.numel() == 1:
                    recorder._this_step()["loss"].append(float(tensor.detach().float().reshape(())))
            recorder._in_backward = True
            try:
                return backward(tensor, *args, **kwargs)
            finally:
                recorder._in_backward = False

        torch.Tensor.backward = recorded_backward
        self._undo.append(lambda: setattr(torch.Tensor, "backward", backward))
        self._install_mode(recorded_backward)
        return self

    def _install_mode(self, recorded_backward) -> None:
        names, callsites = calls.CallNames(), calls.DirectCallSites()
        names.known[recorded_backward] = calls.SKIP  # (the loss is counted by the patch itself)
        callsites.project = os.path.realpath(self.project) if self.project else None
        self._mode = calls.call_mode(self, names, callsites)
        calls.push(self._mode)
        self._undo.append(lambda: calls.remove(self._mode))

    def __exit__(self, *exc) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo = []

    # -- module calls
    def _entered(self, module, args) -> None:
        if self._stack:
            parent, parent_path = self._stack[-1]
            path = f"{parent_path}.{self._child_name(parent, module)}"
        else:
            path = self._root_name(module)
        self._stack.append((module, path))

    def _left(self, module, args, output) -> None:
        while self._stack and self._stack[-1][0] is not module:  # (a call that raised inside)
            self._stack.pop()
        if not self._stack:
            return
        _, path = self._stack.pop()
        if not self.recording:
            return
        key = (self.step, path)
        call = self._calls[key]
        self._calls[key] += 1
        with self._quiet():
            self._outputs(path, None, call, _caller(), output, lambda tensor: tensor.requires_grad)

    def called(self, api: str, frame, args, result) -> None:
        """A torch call `api` the project made at `frame` (the mode's), which returned `result`.
        Whatever goes wrong in recording it is counted, not raised: the script runs on."""
        if not isinstance(result, (self._tensor_type, tuple, list)) or os.getpid() != self._pid:
            return  # (nothing to record, or a DataLoader worker's call: its records would not come back)
        try:
            with self._quiet():
                self._record_call(api, frame, args, result)
        except Exception:  # (a tensor whose values cannot be read here: a subclass's, a fake one)
            self.unrecorded[api] += 1

    def _record_call(self, api: str, frame, args, result) -> None:
        if api.rpartition(".")[2] in calls.CASTS and not _changes_dtype(args, result, self._tensor_type):
            return
        path = self._stack[-1][1] if self._stack else ""
        key = (self.step, path, api)
        call = self._api_calls[key]
        self._api_calls[key] += 1
        filename = frame.f_code.co_filename
        shown = self._shown.get(filename) or self._shown.setdefault(filename, display_path(filename))
        self._outputs(path, api, call, f"{shown}:{frame.f_lineno}", result, lambda tensor: tensor.grad_fn is not None)

    def _outputs(self, path: str, api: str | None, call: int, where: str, output, hooked) -> None:
        """Record each floating-point tensor of `output`, and hook the gradient that will reach it
        where `hooked(tensor)`."""
        if isinstance(output, self._tensor_type):
            leaves = [output]
        else:
            import torch.utils._pytree as pytree

            leaves = pytree.tree_leaves(output)
        for index, tensor in enumerate(leaves):
            if not is_recorded(tensor):
                continue
            autocast = _autocast(tensor)
            self._record("forward", path, api, call, index, where, autocast, tensor)
            if hooked(tensor):
                tensor.register_hook(self._gradient_hook(path, api, call, index, where, autocast))

    def _gradient_hook(self, path: str, api: str | None, call: int, index: int, where: str, autocast):
        step = self.step

        def record(gradient) -> None:
            if self.recording and self.step == step and is_recorded(gradient):
                with self._quiet():
                    self._record("backward", path, api, call, index, where, autocast, gradient)

        return record

    def _record(self, phase: str, path: str, api: str | None, call: int, index: int, where: str, autocast,
                tensor) -> None:
        cached = self._summarised(tensor)
        stats = dict(cached[2])
        stats.update(step=self.step, phase=phase, module=path, call=call, output=index, source=where,
                     autocast_dtype=autocast)
        if api is not None:
            stats["api"] = api
        elif self.patterns and self._keeps(path):
            if cached[3] is None:
                cached[3] = len(self.tensors)
                self.tensors.append(tensor.detach().to(HOST_DEVICE_TYPE, copy=True))
            stats["tensor"] = cached[3]
        self.records.append(stats)
        if autocast:
            self.autocast_dtypes.add(autocast)

    def _keeps(self, path: str) -> bool:
        kept = self._kept.get(path)
        if kept is None:
            kept = self._kept[path] = any(fnmatch.fnmatchcase(path, pattern) for pattern in self.patterns)
        return kept

    def _summarised(self, tensor) -> list:
        """[tensor, version, its statistics (with its sample's index), its whole copy's index or
        None], computed once for a tensor recorded just before, unchanged since: a module's output
        is often its last child's or its last torch call's (Sequential, a block ending in its
        activation), and so is the gradient that reaches it."""
        version = None if tensor.is_inference() else tensor._version  # (inference tensors have none)
        for cached in self._recent:
            if cached[0]() is tensor and version is not None and version == cached[1]:
                return cached
        stats, sample = summary(tensor)
        stats["sample"] = len(self.samples)
        self.samples.append(sample)
        cached = [weakref.ref(tensor), version, stats, None]
        self._recent.append(cached)
        return cached

    def _child_name(self, parent, module) -> str:
        key = (id(parent), id(module))
        if key not in self._children:
            named = (name for name, child in parent.named_modules() if child is module and name)
            self._children[key] = next(named, type(module).__name__)
        return self._children[key]

    def _root_name(self, module) -> str:
        if module not in self._roots:
            name = type(module).__name__
            self._taken[name] += 1
            self._roots[module] = name if self._taken[name] == 1 else f"{name}#{self._taken[name] - 1}"
            for parameter_name, parameter in module.named_parameters():
                self._parameters.setdefault(id(parameter), f"{self._roots[module]}.{parameter_name}")
        return self._roots[module]

    # -- steps
    def _this_step(self) -> dict:
        return self.steps.setdefault(self.step, {"step": self.step, "loss": [], "grad_norms": {}})

    def _before_step(self, optimizer, args, kwargs) -> None:
        if self._mode is not None and calls.on_top(self._mode):  # (an optimizer's calls are not the project's)
            calls.remove(self._mode)
            self._lifted = True
        if not self.recording:
            return
        import torch

        named = [(self._parameters.get(id(p), f"{type(optimizer).__name__}.group{g}.{i}"), p.grad)
                 for g, group in enumerate(optimizer.param_groups) for i, p in enumerate(group["params"])
                 if p.grad is not None]
        if not named:
            return
        norms = [torch.linalg.vector_norm(grad.detach().float()).to(HOST_DEVICE_TYPE) for _, grad in named]
        norms_step = self._this_step()["grad_norms"]
        for (name, _), norm in zip(named, torch.stack(norms).tolist()):
            norms_step[name] = norm

    def _after_step(self, optimizer, args, kwargs) -> None:
        if self._lifted:
            self._lifted = False
            calls.push(self._mode)
        self._made[id(optimizer)] += 1
        made = max(self._made.values())
        if made > self.step and self.recording:
            self._this_step()
            self.step = made
            if self.max_steps is not None and made >= self.max_steps:
                self.recording = False
                raise EnoughSteps


class _Quiet:
    """Where the recorder computes: its torch calls are seen neither by torch function modes (its
    own included) nor by the script's dispatch modes (a FlopCounterMode, a logging mode)."""

    __slots__ = ("_function", "_dispatch")

    @classmethod
    def made_for(cls, torch):
        from torch.utils._python_dispatch import _disable_current_modes

        cls.disable_function, cls.dispatch_depth = torch._C.DisableTorchFunction, torch._C._len_torch_dispatch_stack
        cls.disable_dispatch = staticmethod(_disable_current_modes)
        return cls

    def __enter__(self) -> None:
        self._function = self.disable_function()
        self._function.__enter__()
        self._dispatch = self.disable_dispatch() if self.dispatch_depth() else None
        if self._dispatch is not None:
            self._dispatch.__enter__()

    def __exit__(self, *exc) -> None:
        if self._dispatch is not None:
            self._dispatch.__exit__(*exc)
        self._function.__exit__(*exc)


def _changes_dtype(args, result, tensor_type) -> bool:
    """Whether a conversion made a tensor of another dtype (a rounding), not a move or a no-op."""
    return bool(args) and isinstance(args[0], tensor_type) and isinstance(result, tensor_type) \
        and result.dtype != args[0].dtype


def _autocast(tensor) -> str | None:
    import torch

    device = tensor.device.type
    try:
        if torch.is_autocast_enabled(device):
            return str(torch.get_autocast_dtype(device)).replace("torch.", "")
    except (RuntimeError, TypeError):  # a device type autocast does not know
        return None
    return None


def _caller() -> str:
    """'train.py:31': the innermost line outside torch and torchport on the way to this call."""
    import torch

    skipped = (os.path.join(os.path.dirname(torch.__file__), ""), _OURS)
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(skipped) and not filename.startswith("<"):
            relative = os.path.relpath(filename)
            return f"{filename if relative.startswith('..') else relative}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
