"""What the detector sees: every torch call of the user's code, through one TorchFunctionMode
(functions, Tensor methods and operators, nn.functional) and one global module forward hook
(`model(x)`, `self.fc(x)`), not a wrapper per function as Ascend's rewrite makes.

The mode is on the stack only while a step of the loop runs (`Capture.enter_step` and
`leave_step` around each `yield` of `DETECTOR.start`), and the hooks record only then, so data
loading and the code after the loop cost nothing and are not recorded. During `optimizer.step()`
and `optimizer.zero_grad()` the mode is lifted off the stack (torch's global optimizer step hooks;
zero_grad, which has none, is wrapped while the loop runs): they make a few calls per parameter,
none of them the user's, and each would otherwise pass through Python only to be turned away:
thousands a step for a large model.
"""

from __future__ import annotations

import sys

from torchport.shapes.callsites import USER, CallSites, display_path, position
from torchport.shapes.names import Names
from torchport.shapes.signatures import PLAIN_TYPES, call_shapes, shapes_of
from torchport.shapes.sites import Site


class Recorder:
    """The call sites seen, and which of them the iteration in progress touched."""

    def __init__(self) -> None:
        import torch

        self.tensor = torch.Tensor
        self.plain = PLAIN_TYPES | {torch.dtype, torch.device, torch.Size, torch.layout, torch.memory_format}
        self.callsites = CallSites()
        self.names = Names()
        self.sites: dict[tuple, Site] = {}
        self.iteration = 0  # the number of finished iterations: the index of the one in progress
        self.touched: list[Site] = []
        self.recording = False

    def site_key(self, frame, name: str, what):
        """What tells one call site from another: the code object and instruction, and the callee."""
        return (id(frame.f_code), frame.f_lasti, what)

    def note(self, frame, name: str, what, inputs: tuple, outputs: tuple) -> None:
        """One call of `what` (a function, a module class) at `frame`'s instruction."""
        key = self.site_key(frame, name, what)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = self.new_site(frame, name)
        signature = (inputs, outputs)
        if site.seen_in != self.iteration:
            site.seen_in = self.iteration
            site.current = {signature}
            self.touched.append(site)
        else:
            site.current.add(signature)

    def new_site(self, frame, name: str, paths=()) -> Site:
        line, column = position(frame)
        return Site(display_path(frame.f_code.co_filename), line, column, name,
                    self.callsites.user_stack(frame), paths)

    def finish(self, completed: bool) -> None:
        """End the iteration in progress: keep what it saw when it ran to its end."""
        for site in self.touched:
            if completed:
                site.commit()
            else:
                site.discard()
        self.touched.clear()
        if completed:
            self.iteration += 1


def module_name(cls) -> str:
    """`torch.nn.Linear` for torch's modules, `Net` for the script's own, `package.module.Net` else."""
    import torch

    if cls.__module__.startswith("torch."):
        for public, namespace in (("torch.nn", torch.nn), ("torch.nn.parallel", torch.nn.parallel)):
            if getattr(namespace, cls.__name__, None) is cls:
                return f"{public}.{cls.__name__}"
    return cls.__name__ if cls.__module__ == "__main__" else f"{cls.__module__}.{cls.__name__}"


def _shape_mode(recorder: Recorder, mode_base):
    """The TorchFunctionMode that notes each call's shapes (`project_call_mode`)."""
    note, tensor, plain = recorder.note, recorder.tensor, recorder.plain

    def noted(frame, name, func, args, kwargs, result) -> None:
        outputs = (result.shape,) if isinstance(result, tensor) else shapes_of(result, tensor)
        note(frame, name, func, call_shapes(args, kwargs, tensor, plain), outputs)

    return project_call_mode(mode_base, recorder, recorder.names, recorder.callsites, noted)


def project_call_mode(mode_base, recorder, names, callsites, on_call):
    """A TorchFunctionMode that hands `on_call(frame, name, func, args, kwargs, result)` each torch
    call the project's own code makes while `recorder.recording` (shapes' and dump's). Its
    __torch_function__ runs on every torch call of a step, so what it uses is bound once here and
    the common case (a call straight from the user's frame, a name already known) is a few dict
    look-ups. While torch.compile traces a function it steps aside: the compiled call is recorded
    where the user makes it (the module hook, or the mode when dynamo runs the code eagerly)."""
    known, name_of = names.known, names.of
    kinds, user_frame, getframe = callsites.kinds, callsites.user_frame, sys._getframe
    import torch

    compiling = torch.compiler.is_compiling

    class ProjectCallMode(mode_base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if compiling():  # torch.compile traces through modes: its call is recorded, not its insides
                return func(*args, **kwargs)
            try:
                name = known[func]
            except (KeyError, TypeError):
                name = name_of(func)
            if name is None or not recorder.recording:
                return func(*args, **kwargs)
            frame = getframe(1)
            if kinds.get(id(frame.f_code)) != USER:
                frame = user_frame(frame)
                if frame is None:
                    return func(*args, **kwargs)
            result = func(*args, **kwargs)
            on_call(frame, name, func, args, kwargs, result)
            return result

    return ProjectCallMode()


class Capture:
    """Puts in place and takes away the mode and the hooks that feed a Recorder."""

    def __init__(self, recorder: Recorder) -> None:
        import torch
        from torch.overrides import TorchFunctionMode

        self.recorder = recorder
        self._torch = torch
        self._current_mode = torch.overrides._get_current_function_mode
        self._handles: list = []
        self._lifted = False  # the mode is off the stack for an optimizer step
        self._zero_grad = None  # Optimizer.zero_grad as it was when the step began
        self._lifted_zero_grad = self._lifting_zero_grad()
        self._module_names: dict = {}
        self.mode = _shape_mode(recorder, TorchFunctionMode)

    def attach(self) -> None:
        """For the wrapped loop: the forward hook, the optimizer's lifting. They do nothing between
        steps (not recording, the mode not on the stack), so they are put in place once a loop."""
        from torch.nn.modules.module import register_module_forward_hook
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        self._handles = [register_module_forward_hook(self._forward_hook, with_kwargs=True),
                         register_optimizer_step_pre_hook(self._lift),
                         register_optimizer_step_post_hook(self._restore)]
        optimizer = self._torch.optim.Optimizer
        self._zero_grad = optimizer.zero_grad
        optimizer.zero_grad = self._lifted_zero_grad

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        optimizer = self._torch.optim.Optimizer
        if optimizer.__dict__.get("zero_grad") is self._lifted_zero_grad:
            optimizer.zero_grad = self._zero_grad

    def enter_step(self) -> None:
        """The mode onto the stack: from here the step's calls are seen."""
        self._lifted = False
        self.mode.__enter__()

    def leave_step(self) -> None:
        """The mode off the stack, also from under a mode the script pushed in the step and left
        there (`torch.set_default_device(...)` is one): the modes above it keep their order."""
        stack = self._torch._C
        above = []
        while stack._len_torch_function_stack() > 0:
            mode = stack._pop_torch_function_stack()
            if mode is self.mode:
                break
            above.append(mode)
        for mode in reversed(above):
            stack._push_on_torch_function_stack(mode)

    def _on_top(self) -> bool:
        return self._current_mode() is self.mode

    def _lift(self, *hook_arguments) -> None:
        if self._on_top():
            self.mode.__exit__(None, None, None)
            self._lifted = True

    def _restore(self, *hook_arguments) -> None:
        if self._lifted:
            self._lifted = False
            self.mode.__enter__()

    def _lifting_zero_grad(self):
        """What Optimizer.zero_grad is while a step runs: the one it replaced, with the mode lifted
        (a plain function, so that it binds to the optimizer as a method does)."""
        capture = self

        def zero_grad(optimizer, *args, **kwargs):
            capture._lift()
            try:
                return capture._zero_grad(optimizer, *args, **kwargs)
            finally:
                capture._restore()

        return zero_grad

    def _forward_hook(self, module, args, kwargs, output):
        recorder = self.recorder
        if not recorder.recording or self._torch.compiler.is_compiling():
            return None
        with self._torch._C.DisableTorchFunction():  # reading .shape would call the mode
            frame = recorder.callsites.module_caller(sys._getframe(1))
            if frame is not None:
                cls = type(module)
                name = self._module_names.get(cls) or self._module_names.setdefault(cls, module_name(cls))
                recorder.note(frame, name, cls, call_shapes(args, kwargs, recorder.tensor, recorder.plain),
                              shapes_of(output, recorder.tensor))
        return None
