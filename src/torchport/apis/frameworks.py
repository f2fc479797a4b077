"""Frameworks that own part of a training script's set-up, and the settings of theirs that name CUDA.

- transformers: `attn_implementation="flash_attention_2"` asks for flash-attn's kernels, CUDA builds
  only (transformers raises ImportError without them); "sdpa", torch's own attention, is what
  transformers documents for other devices (huggingface/transformers#36383 for the NPU).
  `device_map` takes devices as torch does, and ints as indices of the accelerator.
- diffusers: `enable_xformers_memory_efficient_attention()` needs xformers, CUDA builds only
  (xformers#1237); diffusers' default attention is torch's SDPA already (on npu torch_npu runs SDPA
  with its own fused kernel; a diffusers model also has `enable_npu_flash_attention()`).
- Lightning: `Trainer(accelerator=...)` and `Fabric(accelerator=...)` know the CPU, CUDA ("gpu"),
  mps, TPUs and "auto" themselves; another device needs an Accelerator registered by a plugin
  (`Target.lightning_built_in`).
  On the CPU its mixed precision is bfloat16 ("16-mixed" is CUDA's float16).
- accelerate sets the device and precision itself on every device type torch knows: left alone.
No LibCST and no torch here: the rules (migrate/rules/framework_settings.py) apply these.
"""

from __future__ import annotations

# -- transformers --
ATTENTION_KEYWORD = "attn_implementation"  # from_pretrained(..., attn_implementation=), config.attn_implementation
ATTENTION_ATTRIBUTES = (ATTENTION_KEYWORD, "_attn_implementation")
CUDA_ONLY_ATTENTION = frozenset({"flash_attention_2", "flash_attention_3"})
PORTABLE_ATTENTION = "sdpa"
DEVICE_MAP_KEYWORD = "device_map"

# -- diffusers --
XFORMERS_SWITCH = "enable_xformers_memory_efficient_attention"
# The classes that have the switch, for `run`: module -> class (a model's, a pipeline's)
XFORMERS_SWITCHES = {"diffusers.models.modeling_utils": "ModelMixin",
                     "diffusers.pipelines.pipeline_utils": "DiffusionPipeline"}

# -- Lightning --
LIGHTNING_ENTRIES = frozenset({
    "lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer",
    "lightning.pytorch.trainer.Trainer", "pytorch_lightning.trainer.Trainer",
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric",
})
# Where Trainer and Fabric hand their accelerator= and precision= on (as keywords), for `run` to read:
# module -> the connector class, in the lightning package and in the standalone ones.
LIGHTNING_CONNECTORS = {
    "lightning.fabric.connector": "_Connector",
    "lightning_fabric.connector": "_Connector",
    "lightning.pytorch.trainer.connectors.accelerator_connector": "_AcceleratorConnector",
    "pytorch_lightning.trainer.connectors.accelerator_connector": "_AcceleratorConnector",
}
LIGHTNING_ACCELERATOR_KEYWORD = "accelerator"
LIGHTNING_PRECISION_KEYWORD = "precision"
LIGHTNING_GPU = frozenset({"gpu"})  # (and "cuda", a device type, which the rule reads as such)
LIGHTNING_AUTO = "auto"
LIGHTNING_FLOAT16 = frozenset({"16-mixed", "16", "16-true"})
LIGHTNING_BFLOAT16 = {"16-mixed": "bf16-mixed", "16": "bf16-mixed", "16-true": "bf16-true"}


def lightning_accelerator(device_type: str | None) -> str:
    """The accelerator name Lightning takes for a target's device type ("auto" where only the run knows)."""
    return LIGHTNING_AUTO if device_type is None else device_type

# -- what a framework builds for CUDA and not for every target (the targets say which they lack) --
DEEPSPEED_LAMB = ("deepspeed.ops.lamb.FusedLamb", "deepspeed.ops.lamb.fused_lamb.FusedLamb")
DEEPSPEED_LION = ("deepspeed.ops.lion.FusedLion", "deepspeed.ops.lion.fused_lion.FusedLion")
DEEPSPEED_ADAM = ("deepspeed.ops.adam.FusedAdam", "deepspeed.ops.adam.fused_adam.FusedAdam")
DEEPSPEED_ZERO_PP = "deepspeed ZeRO++ quantization"  # (a feature, named by the config keys that turn it on)
DEEPSPEED_CONFIG_KEYS = {"zero_quantized_weights": DEEPSPEED_ZERO_PP, "zero_quantized_gradients": DEEPSPEED_ZERO_PP,
                         "zero_quantized_nontrainable_weights": DEEPSPEED_ZERO_PP}
BITSANDBYTES_CONFIGS = ("transformers.BitsAndBytesConfig", "transformers.utils.quantization_config.BitsAndBytesConfig",
                        "diffusers.BitsAndBytesConfig")


def lacking(names: tuple[str, ...], instead: str) -> dict[str, str]:
    """`Target.missing_builds` rows: each of `names` (one API's spellings) -> what to use instead."""
    return dict.fromkeys(names, instead)
