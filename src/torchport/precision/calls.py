"""Which torch calls a dump records besides the module calls: the calls the project's own code
makes (`F.gelu(x)`, `x @ w`, `torch.softmax(s, -1)`, in a forward it wrote or in its training
loop), seen through one TorchFunctionMode, each named by its public spelling
(`torch.nn.functional.gelu`, `torch.Tensor.matmul`) and placed at the project's line.

A call is the project's when the first frame above it, past torch's dispatch layer (the Python
wrappers that hand a call to the mode: torch.overrides, torch/_tensor.py, nn.functional, ...)
and torchport's run-time shims, is a file of the project (shapes.callsites' project: the
script's repository, no site-packages). A call made by any other code (an nn.Linear's forward,
an optimizer, a library, the standard library) is not recorded: the module call that made it is.

Left out, besides what only reads metadata: the calls whose output holds no value that was not
in their inputs (views, reshapes, copies, concatenations, selections, masks, device moves), the
tensors made from nothing but a shape or a constant, and the bookkeeping of autograd and storage.
A dtype conversion is recorded where it changes the dtype (a rounding); random draws are, as
values the runs should share."""

from __future__ import annotations

from torchport.shapes.callsites import BARRIER, PASS, USER, CallSites
from torchport.shapes.names import METADATA, SKIP, Names

# No new values: views and shape changes, copies, joins and selections, masks and fills, tensors
# made of a shape or constant, device moves, autograd's and storage's bookkeeping.
NO_NUMERICS = METADATA | frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "ravel", "squeeze", "squeeze_",
    "unsqueeze", "unsqueeze_", "permute", "transpose", "transpose_", "t", "t_", "swapaxes", "swapdims",
    "movedim", "moveaxis", "expand", "expand_as", "broadcast_to", "broadcast_tensors", "as_strided",
    "contiguous", "narrow", "select", "split", "split_with_sizes", "tensor_split", "hsplit", "vsplit",
    "dsplit", "chunk", "unbind", "unfold", "diagonal", "view_as_real", "view_as_complex", "real", "imag",
    "__getitem__", "__setitem__", "clone", "detach", "detach_", "to_dense", "repeat", "repeat_interleave", "tile",
    "flip", "fliplr", "flipud", "roll", "rot90", "cat", "concat", "concatenate", "stack", "hstack",
    "vstack", "dstack", "column_stack", "gather", "index_select", "take", "take_along_dim",
    "masked_select", "masked_fill", "masked_fill_", "where", "tril", "triu", "tril_", "triu_", "pad",
    "zero_", "fill_", "copy_", "set_", "resize_", "resize_as_", "requires_grad_", "backward",
    "cpu", "cuda", "pin_memory", "share_memory_", "numpy", "storage", "untyped_storage", "record_stream",
    "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "empty", "empty_like", "empty_strided",
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "eye", "arange", "linspace", "logspace", "tensor",
    "as_tensor", "asarray", "from_numpy", "scalar_tensor", "is_nonzero", "equal", "allclose", "is_same_size"})
# Conversions: recorded where the dtype changes (a rounding), left out as device moves or no-ops.
CASTS = frozenset({"to", "type", "type_as", "float", "half", "double", "bfloat16"})
# Torch's modules whose frames stand between a call and its caller: the dispatch layer.
DISPATCH = frozenset({"torch.overrides", "torch._tensor", "torch.nn.functional", "torch.functional",
                      "torch._jit_internal", "torch.utils._device", "torch._ops"})


class CallNames(Names):
    """Names as the shapes report gives them, `torch.functional.einsum` published as `torch.einsum`,
    and SKIP for a call that makes no new values."""

    def __init__(self) -> None:
        super().__init__(NO_NUMERICS)

    def _name(self, func) -> str | None:
        name = super()._name(func)
        if name is SKIP:
            return SKIP
        module, _, short = name.rpartition(".")
        if short in NO_NUMERICS:
            return SKIP
        if module == "torch.functional":
            import torch

            if getattr(torch, short, None) is func:
                return f"torch.{short}"
        return name


class DirectCallSites(CallSites):
    """Frames classified for calls the project makes itself: torch's dispatch layer and torchport
    (its run-time shims) are walked past, every other frame of torch (a module's forward, an
    optimizer, nn.init) and of any code not the project's ends the walk."""

    def _kind_of(self, code, name: str) -> int:
        package = name.partition(".")[0]
        if name in DISPATCH or package == "torchport":
            return PASS
        if package == "torch" or self._is_stdlib(code.co_filename):
            return BARRIER
        return USER if self.in_project(code.co_filename) else BARRIER


def call_mode(recorder, names: CallNames, callsites: DirectCallSites):
    """The TorchFunctionMode that hands `recorder.called(name, frame, args, result)` each torch
    call the project makes while it records (shapes' `project_call_mode`)."""
    from torch.overrides import TorchFunctionMode

    from torchport.shapes.capture import project_call_mode

    called = recorder.called

    def recorded(frame, name, func, args, kwargs, result) -> None:
        called(name, frame, args, result)

    return project_call_mode(TorchFunctionMode, recorder, names, callsites, recorded)


def push(mode) -> None:
    import torch

    torch._C._push_on_torch_function_stack(mode)


def remove(mode) -> bool:
    """Take `mode` off torch's mode stack, also from under modes the script pushed above it and
    left there (they keep their order); whether it was there."""
    import torch

    stack, above, found = torch._C, [], False
    while stack._len_torch_function_stack() > 0:
        top = stack._pop_torch_function_stack()
        if top is mode:
            found = True
            break
        above.append(top)
    for top in reversed(above):
        stack._push_on_torch_function_stack(top)
    return found


def on_top(mode) -> bool:
    import torch

    return torch.overrides._get_current_function_mode() is mode
