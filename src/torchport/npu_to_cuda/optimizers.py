"""torch_npu's fused optimizers (torch_npu.optim.NpuFused*, Ascend apex's apex.optimizers.NpuFused*):
torch's own on CUDA where every argument of the call means the same to both (targets/npu_optim.py),
else torchport.optim's twin, which takes torch_npu's signature."""

from __future__ import annotations

import libcst as cst

from torchport.apis import apex
from torchport.apis.cuda_module import DEVICE_MODULE
from torchport.npu_to_cuda.names import TORCH_OPTIM, TORCHPORT_OPTIM
from torchport.targets import Target, npu_optim
from torchport.targets.npu_optim import Constructor

CONSTRUCTORS = {constructor.name: constructor for constructor in npu_optim.TWINS.values()}
# NpuFused* -> the torch.optim class it stands for (timm's and BERT's twins are not torch's)
TORCH_TWINS = {constructor.name: api for api, constructor in npu_optim.TWINS.items() if api.startswith(TORCH_OPTIM + ".")}
CLIP = npu_optim.CLIP
CLIP_FUNCTION = "torch.nn.utils.clip_grad_norm_"
PARAMS = "params"


def constructor(qualified: str | None) -> Constructor | None:
    """The NpuFused class `qualified` names (torch_npu's, or Ascend apex's twin of it)."""
    if qualified is None:
        return None
    module, _, name = qualified.rpartition(".")
    if name not in CONSTRUCTORS:
        return None
    if module == npu_optim.PACKAGE or (qualified in apex.OPTIMIZERS and name in apex.NPU_FUSED):
        return CONSTRUCTORS[name]
    return None


def replacement(found: Constructor, call: cst.Call | None, target: Target) -> tuple[str, str]:
    """(the class that replaces it, why)."""
    twin = TORCH_TWINS.get(found.name)
    if target.device_module == DEVICE_MODULE and twin is not None:
        different = _different_argument(found, call)
        if different is None:
            return twin, "every argument means the same to torch's"
        return f"{TORCHPORT_OPTIM}.{found.name}", f"{different} does not mean the same to {twin}"
    return f"{TORCHPORT_OPTIM}.{found.name}", "torchport.optim's twin, with torch_npu's signature"


def _different_argument(found: Constructor, call: cst.Call | None) -> str | None:
    """The first argument of `call` that torch's optimizer would read otherwise; None if none."""
    if call is None:
        return "the class itself"  # (not a call: isinstance checks, a class passed on)
    positional = 0
    for arg in call.args:
        if arg.star:
            return f"{arg.star}{'args' if arg.star == '*' else 'kwargs'}"
        if arg.keyword is None:
            positional += 1
            if positional - 1 > found.positional:
                return f"argument {positional} by position"
        elif arg.keyword.value != PARAMS and arg.keyword.value not in found.same:
            return arg.keyword.value
    return None
