"""torch's losses that read class indices, which must be int64 (Long) off the NPU.

Ascend's loss kernels take int32 class indices, and ModelZoo's scripts cast their labels so
(`target = target.to(torch.int32)`, `criterion(out, target.int())`); torch's CPU and CUDA kernels
refuse them ("expected scalar type Long but found Int", "expected target dtype to be Long").
"""

from __future__ import annotations

# The classes and functions whose `target` (second argument) holds class indices.
LONG_TARGET_CLASSES = ("torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.nn.MultiMarginLoss",
                       "torch.nn.modules.loss.CrossEntropyLoss", "torch.nn.modules.loss.NLLLoss")
LONG_TARGET_FUNCTIONS = ("torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
                         "torch.nn.functional.multi_margin_loss")
# Losses of other libraries named as torch names its class-index losses (timm's LabelSmoothingCrossEntropy,
# which gathers with the target: int64 too off the NPU).
LONG_TARGET_SUFFIXES = ("CrossEntropyLoss", "CrossEntropy", "NLLLoss")
TARGET_ARGUMENT = "target"
TARGET_POSITION = 1  # loss(input, target)
# The int32 dtype as code spells it, and the int64 one each becomes.
INT32_DTYPES = {"torch.int32": "torch.int64", "torch.int": "torch.long"}
INT32_METHOD, INT64_METHOD = "int", "long"  # x.int() / x.long()
CAST_METHODS = ("to", "type")  # x.to(torch.int32), x.type(torch.int32)
DTYPE_ARGUMENT = "dtype"
