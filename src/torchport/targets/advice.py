"""What to tell a user about speed and precision on a target, as data the advice rules read.

`Advice` holds the per-target facts (AMP is effectively required on the NPU's matrix units, MPS
has no float64, what to do when shapes vary between steps, ...). `Affinity` rows name a faster
API a target has for something a script does: a torch optimizer that has a fused twin (torch_npu's
own on the NPU, `torchport.optim`'s elsewhere), a hand-written attention that `scaled_dot_product_attention` computes in one
kernel, a fused NPU op from torch_npu. The rules in migrate/rules/*_affinity.py match them in the
same pass as the migration rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torchport.targets import npu_optim

OPTIMIZER = "optimizer"
FUNCTION = "function"
PATTERN = "pattern"


@dataclass(frozen=True)
class Takes:
    """The arguments a replacement takes that mean what the replaced API's mean: a call that passes
    any other is not swapped."""

    keywords: tuple[str, ...]  # by name, after the first parameter (what an optimizer optimizes)
    positional: int  # how many of them a call may pass by position, after the first
    required: tuple[str, ...] = ()  # those the replacement has no default for

    def refuses(self, positional: int, keywords: list[str], starred: bool) -> str:
        """Why a call with `positional` arguments after the first and these `keywords` cannot be
        swapped ("" when it can)."""
        if starred:
            return "its arguments come from * or **"
        others = [k for k in keywords if k not in self.keywords]
        if others:
            return f"it passes {', '.join(f'{k}=' for k in others)}, which the replacement does not take"
        if positional > self.positional:
            return f"it passes {positional} arguments by position after the first; the replacement orders only {self.positional} the same"
        given = set(self.keywords[:positional]) | set(keywords)
        missing = [r for r in self.required if r not in given]
        return f"it passes no {', '.join(missing)}, which the replacement requires" if missing else ""


@dataclass(frozen=True)
class Affinity:
    category: str  # OPTIMIZER, FUNCTION or PATTERN (the report's "Api Type")
    name: str  # what the script uses: a qualified name, or a pattern's name ("attention")
    replacement: str  # the faster API
    safe: bool = False  # the same update from the same arguments: --apply-affinity may swap it (as `takes` allows)
    note: str = ""  # what to mind when making the change by hand
    takes: Takes | None = None  # which arguments a safe swap may keep (None: all the replaced API takes)
    conflict: str = ""  # a regular expression: a file whose source matches it is not swapped ...
    conflict_why: str = ""  # ... for this reason


@dataclass(frozen=True)
class Advice:
    needs_amp: bool = False  # fp32 training leaves the matrix units mostly idle
    # element type -> why the device cannot hold it at all (a limit of the device as a whole:
    # a dtype one kernel lacks is not knowable from the kernel lists)
    dtype_limits: dict[str, str] = field(default_factory=dict)
    has_device: bool = True  # False on the CPU: copies, launchers and queues have nothing to do
    single_device: bool = False  # one device a machine (Apple silicon): no process per device to start
    launch_env: tuple[str, ...] = ()  # environment switches the target's guide recommends
    varying_shapes: str = ""  # the remedy (a call) when input shapes change between steps
    varying_shapes_effect: str = ""  # where it goes and what it does, for `torchport shapes`
    fixed_shapes: str = ""  # what to keep when the shapes do not vary
    affinity: tuple[Affinity, ...] = ()

    @property
    def no_float64(self) -> bool:
        """Whether the device has no float64 at all."""
        return "float64" in self.dtype_limits

    @property
    def varying_shapes_api(self) -> str:
        """The name of the function the remedy calls (`set_compile_mode`): a file that names it has it."""
        return self.varying_shapes.split("(", 1)[0].rsplit(".", 1)[-1]


_KEEP = "same arguments and state_dict; every parameter updated in a few kernel launches"
_ADAM = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize")
# replaced optimizer -> (its twin in torchport.optim, the parameters both take, how many of them in
# the same positions): torch's foreach=, fused=, differentiable=, capturable= and timm's caution=
# the twins do not take, so a call that passes one keeps its optimizer.
_TORCHPORT_TWINS = {
    "torch.optim.SGD": ("FusedSGD", ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"), 5),
    "torch.optim.Adam": ("FusedAdam", (*_ADAM, "decoupled_weight_decay"), 5),
    "torch.optim.AdamW": ("FusedAdamW", _ADAM, 5),
    "torch.optim.Adadelta": ("FusedAdadelta", ("lr", "rho", "eps", "weight_decay", "maximize"), 4),
    "torch.optim.RMSprop": ("FusedRMSprop", ("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"), 6),
    "timm.optim.Lamb": ("FusedLamb", ("lr", "bias_correction", "betas", "eps", "weight_decay", "grad_averaging",
                                      "max_grad_norm", "trust_clip", "always_adapt", "decoupled_decay",
                                      "corrected_weight_decay"), 9),
    "timm.optim.AdamP": ("FusedAdamP", ("lr", "betas", "eps", "weight_decay", "delta", "wd_ratio", "nesterov"), 7),
    "timm.optim.RMSpropTF": ("FusedRMSpropTF", ("lr", "alpha", "eps", "weight_decay", "momentum", "centered",
                                                "decoupled_decay", "corrected_weight_decay", "lr_in_momentum"), 9),
    "pytorch_pretrained_bert.optimization.BertAdam": (
        "FusedBertAdam", ("lr", "warmup", "t_total", "schedule", "b1", "b2", "e", "weight_decay", "max_grad_norm"), 9),
}

OPTIMIZERS = tuple(
    Affinity(OPTIMIZER, name, f"torchport.optim.{twin}", safe=True, note=_KEEP, takes=Takes(keywords, positional))
    for name, (twin, keywords, positional) in _TORCHPORT_TWINS.items()
)

PORTABLE = (
    Affinity(FUNCTION, "torch.nn.utils.clip_grad_norm_", "optimizer.clip_grad_norm_fused_",
             note="with a torchport.optim optimizer: the norm over its flat gradient buffer, one kernel"),
    Affinity(PATTERN, "attention", "torch.nn.functional.scaled_dot_product_attention",
             note="softmax(q @ k^T / sqrt(d)) @ v by hand: one fused kernel, no (L x L) matrix kept"),
    Affinity(PATTERN, "rms_norm", "torch.nn.functional.rms_norm", note="x * rsqrt(mean(x^2) + eps) by hand"),
    Affinity(PATTERN, "gelu_tanh", "torch.nn.functional.gelu", note='the tanh approximation by hand: approximate="tanh"'),
)

# The call forms follow torch_npu's operator schemas (npu::npu_fusion_attention(Tensor query, Tensor key,
# Tensor value, int head_num, str input_layout, ..., float scale=1., ...) -> (Tensor, ...),
# npu::npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor),
# npu::npu_rotary_mul(Tensor self, Tensor r1, Tensor r2), npu::npu_swiglu(Tensor self, int dim=-1),
# npu::npu_gelu(Tensor self, *, str approximate="none")), as Ascend/pytorch documents them.
NPU_FUSED = (
    Affinity(PATTERN, "attention", "torch_npu.npu_fusion_attention",
             note="softmax(q @ k^T / sqrt(d)) @ v by hand: torch_npu.npu_fusion_attention(q, k, v, head_num, "
                  "\"BNSD\", scale=1 / sqrt(d))[0] (its scale is 1. unless given)"),
    Affinity(PATTERN, "rms_norm", "torch_npu.npu_rms_norm",
             note="x * rsqrt(mean(x^2) + eps) by hand: torch_npu.npu_rms_norm(x, weight, epsilon=eps)[0] "
                  "(it returns y and rstd)"),
    Affinity(PATTERN, "rotary_embedding", "torch_npu.npu_rotary_mul",
             note="x * cos + rotate_half(x) * sin by hand: torch_npu.npu_rotary_mul(x, cos, sin)"),
    Affinity(PATTERN, "swiglu", "torch_npu.npu_swiglu",
             note="silu(a) * b by hand: torch_npu.npu_swiglu(x, dim=-1), x holding a then b along dim "
                  "(the projection before it is split)"),
    Affinity(PATTERN, "gelu_tanh", "torch_npu.npu_gelu",
             note="the tanh approximation by hand: torch_npu.npu_gelu(x, approximate=\"tanh\")"),
    Affinity(FUNCTION, "torch.nn.utils.clip_grad_norm_", f"optimizer.{npu_optim.CLIP}",
             note=f"with a {npu_optim.PACKAGE}.NpuFused* optimizer: optimizer.{npu_optim.CLIP}(max_norm, norm_type=2), "
                  "the norm over its combined gradients, not a pass per parameter (after scaler.unscale_ under a GradScaler)"),
)


def _npu_optimizer(name: str, twin: npu_optim.Constructor) -> Affinity:
    """The row for `name` on the NPU: torch_npu's own fused twin, swapped where its arguments
    mean the same (npu_optim.py says which do)."""
    if not twin.same:
        return Affinity(OPTIMIZER, name, twin.qualified, note=f"{npu_optim.WHY_NOT[twin.name]}; it needs {npu_optim.NEEDS}")
    return Affinity(OPTIMIZER, name, twin.qualified, safe=True,
                    note=f"torch_npu's fused optimizer, the same update in a few kernel launches; it needs {npu_optim.NEEDS}",
                    takes=Takes(twin.same, twin.positional, twin.required),
                    conflict=npu_optim.SET_TO_NONE, conflict_why="the file calls zero_grad(set_to_none=True), which it refuses")


NPU_OPTIMIZERS = tuple(_npu_optimizer(name, twin) for name, twin in npu_optim.TWINS.items())


def common(**facts) -> Advice:
    """Advice with the affinity rows every target shares."""
    return Advice(affinity=OPTIMIZERS + PORTABLE, **facts)


NPU = Advice(
    needs_amp=True,
    launch_env=("TASK_QUEUE_ENABLE=1",),
    # binary (precompiled) kernels, not compiled again for each new shape (Ascend's advice, torch_npu.md §3.1)
    varying_shapes="torch_npu.npu.set_compile_mode(jit_compile=False)",
    varying_shapes_effect="once, before the loop: precompiled kernels, no compiling per shape",
    fixed_shapes="on an NPU keep jit_compile=True, its fused kernels are faster",
    affinity=NPU_OPTIMIZERS + NPU_FUSED,
)
