"""NVIDIA apex: its public API, and what each name means in native torch.

apex (github.com/NVIDIA/apex, read at commit 1ccaaf4 of `apex/amp/_initialize.py`) was CUDA's
mixed-precision and fused-kernel library before `torch.cuda.amp`; it builds only against CUDA
(Ascend ships its own fork for the NPU). Three mechanisms read this module:
- the source conversion (`torchport.apex_to_torch`): apex code rewritten to native torch in CUDA's
  own dialect (`torch.amp.autocast("cuda")`, torch DDP), which migration then moves to the target;
- the stand-in package (`torchport.compat.apex`): the same meanings at run time, for an
  unmodified script under `torchport run` and for a form the conversion cannot rewrite;
- the analysers: what each apex use becomes.
No torch at import, no LibCST.
"""

from __future__ import annotations

from typing import NamedTuple

APEX = "apex"
AMP = "apex.amp"
INITIALIZE = "apex.amp.initialize"
SCALE_LOSS = "apex.amp.scale_loss"
MASTER_PARAMS = "apex.amp.master_params"
STATE_DICT = "apex.amp.state_dict"
LOAD_STATE_DICT = "apex.amp.load_state_dict"
# The function lists of apex's O1 patcher: native autocast keeps lists of its own, so a
# registration has no native meaning (dropped, reported).
REGISTRATIONS = frozenset(
    f"{AMP}.{name}" for name in ("register_half_function", "register_float_function", "register_promote_function",
                                 "half_function", "float_function", "promote_function")
)
DISABLE_CASTS = "apex.amp.disable_casts"  # a context: native `torch.autocast(<device>, enabled=False)`


class OptLevel(NamedTuple):
    """What an `opt_level` means, as apex's `_initialize`/`frontend.Properties` set it, and its
    native form: O1 (functions patched to run in float16 where safe) and O2 (the model cast to
    float16, float32 master weights, BatchNorm kept float32) both become autocast, as NVIDIA's own
    migration note says; O3 is pure float16, the model cast as apex casts it; O0 is float32."""

    autocast: bool  # the forward pass runs under autocast
    cast_model: bool  # the model itself is cast to the half type (O3)
    loss_scale: str | float  # apex's default: "dynamic" or a static scale (1.0: no scaling)


OPT_LEVELS = {
    "O0": OptLevel(autocast=False, cast_model=False, loss_scale=1.0),
    "O1": OptLevel(autocast=True, cast_model=False, loss_scale="dynamic"),
    "O2": OptLevel(autocast=True, cast_model=False, loss_scale="dynamic"),
    "O3": OptLevel(autocast=False, cast_model=True, loss_scale=1.0),
}
DEFAULT_OPT_LEVEL = "O1"
DYNAMIC = "dynamic"
# A static loss scale as a GradScaler: it starts at the scale and never grows (apex's static
# scale never changes; unlike apex, a step with inf/nan gradients is skipped and the scale halved).
STATIC_GROWTH_INTERVAL = 2**31 - 1

# amp.initialize's parameters, in order (apex/amp/frontend.py).
INITIALIZE_PARAMETERS = (
    "models", "optimizers", "enabled", "opt_level", "cast_model_type", "patch_torch_functions",
    "keep_batchnorm_fp32", "master_weights", "loss_scale", "cast_model_outputs", "num_losses",
    "verbosity", "min_loss_scale", "max_loss_scale",
)
# Ascend's apex adds these (the guide's `combine_grad=True`); native torch has no use for them.
ASCEND_INITIALIZE_PARAMETERS = ("combine_grad", "combine_ddp", "ddp_replica_count", "check_combined_tensors",
                                "user_cast_preferred")
# amp.scale_loss(loss, optimizers, loss_id=0, model=None, delay_unscale=False, delay_overflow_check=False)
SCALE_LOSS_PARAMETERS = ("loss", "optimizers", "loss_id", "model", "delay_unscale", "delay_overflow_check")
# initialize's parameters whose apex meaning native torch has already, each with why (dropped).
INITIALIZE_NATIVE_ALREADY = {
    "keep_batchnorm_fp32": "autocast keeps BatchNorm in float32 itself",
    "master_weights": "the model's weights stay float32 under autocast: they are the master weights",
    "num_losses": "one GradScaler serves every loss",
    "verbosity": "apex's own logging",
    "min_loss_scale": "GradScaler's dynamic scale has no lower bound",
    "max_loss_scale": "GradScaler's dynamic scale has no upper bound",
    **{name: "Ascend apex's fused-gradient option: native torch needs none" for name in ASCEND_INITIALIZE_PARAMETERS},
}
# initialize's parameters that ask for apex's own casting, which autocast does not follow (given
# other than None, the file is not converted).
INITIALIZE_APEX_ONLY = ("cast_model_type", "patch_torch_functions", "cast_model_outputs")
# scale_loss's parameters native torch has no use for, each with why.
SCALE_LOSS_NATIVE_ALREADY = {
    "loss_id": "one GradScaler serves every loss",
    "delay_unscale": "GradScaler unscales at scaler.step (or scaler.unscale_), so accumulated gradients stay scaled "
                     "until then without being asked",
    "delay_overflow_check": "GradScaler checks for inf/nan at scaler.step",
    "model": "GradScaler needs no model",
}


class Replacement(NamedTuple):
    """A native stand-in for an apex class or function called with the same arguments.

    `native`: the qualified name it becomes. `keeps`: the parameters passed on (by position, in
    this order; any other is dropped with a row). `defaults`: apex defaults that differ from the
    native ones, passed explicitly when the call leaves them out. `renames`: apex parameter ->
    native parameter. `differs`: parameter -> (the value native torch matches, why another value
    cannot be kept): a call that passes another value is reported as not converted.
    `chooses`: (parameter, value when not given, native when it is false): the parameter picks the
    native class instead of being passed on (FusedAdam's adam_w_mode)."""

    native: str
    keeps: tuple[str, ...]
    defaults: dict[str, str] = {}
    renames: dict[str, str] = {}
    differs: dict[str, tuple[str, str]] = {}
    chooses: tuple[str, str, str] | None = None


OPTIMIZERS = {
    "apex.optimizers.FusedAdam": Replacement(
        "torchport.optim.FusedAdamW", ("params", "lr", "betas", "eps", "weight_decay"),
        defaults={"weight_decay": "0.0"}, renames={},
        differs={"bias_correction": ("True", "torch's Adam always corrects the bias"),
                 "amsgrad": ("False", "apex's FusedAdam refuses AMSGrad")},
        chooses=("adam_w_mode", "True", "torchport.optim.FusedAdam")),
    "apex.optimizers.FusedLAMB": Replacement(
        "torchport.optim.FusedLamb", ("params", "lr", "bias_correction", "betas", "eps", "weight_decay",
                                      "grad_averaging", "max_grad_norm"),
        renames={"use_nvlamb": "always_adapt"},
        differs={"adam_w_mode": ("True", "the LAMB twin decays weights decoupled, as adam_w_mode=True"),
                 "amsgrad": ("False", "apex's FusedLAMB refuses AMSGrad")}),
    "apex.optimizers.FusedSGD": Replacement(
        "torchport.optim.FusedSGD", ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
        differs={"wd_after_momentum": ("False", "torch's SGD adds weight decay before momentum")}),
    "apex.optimizers.FusedAdagrad": Replacement(
        "torch.optim.Adagrad", ("params", "lr", "eps", "weight_decay"), defaults={"eps": "1e-10"},
        differs={"adagrad_w_mode": ("False", "torch's Adagrad adds weight decay to the gradient")}),
}
# Ascend apex's NPU optimizers (apex.optimizers.NpuFused*): torchport.optim has each, same arguments.
NPU_FUSED = ("NpuFusedSGD", "NpuFusedAdam", "NpuFusedAdamW", "NpuFusedAdadelta", "NpuFusedLamb", "NpuFusedAdamP",
             "NpuFusedBertAdam", "NpuFusedRMSprop", "NpuFusedRMSpropTF")
OPTIMIZERS.update({f"apex.optimizers.{name}": Replacement(f"torchport.optim.{name}", ()) for name in NPU_FUSED})
# What Ascend's apex build (gitee.com/ascend/apex) has, and nothing more: amp (with combine_grad),
# combine tensors/grad (apex.contrib.combine_tensors) and the NpuFused optimizers. It has none of
# NVIDIA apex's CUDA modules (normalization, parallel, the rest of contrib, the Fused* optimizers,
# multi_tensor_apply, fp16_utils): reference/torch_npu.md, modern.md. A target whose `apex_build`
# is this keeps these names as written; the rest of a file's apex takes the native rewrite.
ASCEND_APEX = (AMP, "apex.contrib.combine_tensors", *(f"apex.optimizers.{name}" for name in NPU_FUSED))


def in_build(api: str, build: tuple[str, ...]) -> bool:
    """Whether the apex name `api` (a module, class or function) exists in an apex build that has
    `build`: a name of it, beneath one (`apex.amp.scale_loss`), a package above one (`apex`,
    `apex.optimizers`), or an optimizer of it by its module's path
    (`apex.optimizers.npu_fused_sgd.NpuFusedSGD`)."""
    if api.startswith("apex.optimizers.") and api.count(".") > 2:
        api = "apex.optimizers." + api.rsplit(".", 1)[-1]
    return any(api == name or api.startswith(f"{name}.") or name.startswith(f"{api}.") for name in build)


# Parameters every apex optimizer takes that change nothing in native torch (gradients set to
# None, float32 master copies: torch.amp keeps the model's weights in float32 already).
HARMLESS_OPTIMIZER_PARAMETERS = ("set_grad_none", "materialize_master_grads", "capturable", "master_weights")

PARALLEL = {
    "apex.parallel.DistributedDataParallel": Replacement(
        "torch.nn.parallel.DistributedDataParallel", ("module",),
        differs={"gradient_average": ("True", "torch's DDP always averages gradients"),
                 "gradient_predivide_factor": ("1.0", "torch's DDP divides by the world size only")}),
    "apex.parallel.convert_syncbn_model": Replacement(
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm", ("module", "process_group"),
        differs={"channel_last": ("False", "torch's SyncBatchNorm takes channels first")}),
    "apex.parallel.SyncBatchNorm": Replacement(
        "torch.nn.SyncBatchNorm", ("num_features", "eps", "momentum", "affine", "track_running_stats", "process_group"),
        differs={"channel_last": ("False", "torch's SyncBatchNorm takes channels first"),
                 "fuse_relu": ("False", "torch's SyncBatchNorm has no fused ReLU")}),
}
# apex DDP's tuning knobs (bucketing, streams, fp32 all-reduce): torch's DDP decides these itself.
DDP_TUNING = ("message_size", "delay_allreduce", "shared_param", "allreduce_trigger_params",
              "retain_allreduce_buffers", "allreduce_always_fp32", "num_allreduce_streams",
              "allreduce_communicators", "gradient_average_split_factor", "prof")

NORMALIZATION = {
    name: Replacement("torch.nn.LayerNorm", ("normalized_shape", "eps", "elementwise_affine"))
    for name in ("apex.normalization.FusedLayerNorm", "apex.normalization.MixedFusedLayerNorm",
                 "apex.normalization.fused_layer_norm.FusedLayerNorm",
                 "apex.normalization.fused_layer_norm.MixedFusedLayerNorm")
}
NORMALIZATION.update({
    # torch's RMSNorm defaults eps to the dtype's machine epsilon; apex's is 1e-5
    name: Replacement("torch.nn.RMSNorm", ("normalized_shape", "eps", "elementwise_affine"), defaults={"eps": "1e-5"})
    for name in ("apex.normalization.FusedRMSNorm", "apex.normalization.MixedFusedRMSNorm",
                 "apex.normalization.fused_layer_norm.FusedRMSNorm",
                 "apex.normalization.fused_layer_norm.MixedFusedRMSNorm")
})

# The native recipe for what has no one-to-one replacement: a row tells the user what to write.
FP16_UTILS = "apex.fp16_utils"
FP16_UTILS_RECIPE = ("apex.fp16_utils (FP16_Optimizer, network_to_half, master/model parameter copies) has no "
                     "native twin: keep the model in float32, run its forward under torch.autocast and step "
                     "through torch.amp.GradScaler (scaler.scale(loss).backward(); scaler.step(opt); scaler.update())")

# The stand-in package, and the import that replaces `import apex` where the conversion cannot
# rewrite a file with confidence.
COMPAT = "torchport.compat.apex"
# apex's CUDA extension of multi-tensor kernels, which `apex.multi_tensor_apply.multi_tensor_applier`
# is called with (`multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)`):
# its stand-in is torch's foreach ops, served as `amp_C` by `torchport run`.
AMP_C = "amp_C"
COMPAT_AMP_C = "torchport.compat.amp_C"
MULTI_TENSOR_APPLIER = "apex.multi_tensor_apply.multi_tensor_applier"
