"""The legacy typed classes: `torch.cuda.FloatTensor`, `torch.cuda.HalfStorage`, ...

Each is the CUDA twin of torch's class of the same name (`torch.FloatTensor`), which holds the
dtype; what a target makes of them is in its verdicts.
"""

from __future__ import annotations


def is_legacy_type(name: str) -> bool:
    """Whether `name` (of torch.cuda) is a legacy typed class: `FloatTensor`, `HalfStorage`."""
    return name.endswith(("Tensor", "Storage")) and name[0].isupper()


def legacy_tensor_types(cuda_names) -> list[str]:
    """`FloatTensor`, `HalfStorage`, ...: the legacy typed classes among `torch.cuda`'s names."""
    return sorted(n for n in cuda_names if is_legacy_type(n))


# The dtype of each legacy typed tensor class (`torch.FloatTensor.dtype`; a test reads torch's).
LEGACY_DTYPES = {
    "FloatTensor": "torch.float32", "DoubleTensor": "torch.float64", "HalfTensor": "torch.float16",
    "BFloat16Tensor": "torch.bfloat16", "LongTensor": "torch.int64", "IntTensor": "torch.int32",
    "ShortTensor": "torch.int16", "CharTensor": "torch.int8", "ByteTensor": "torch.uint8", "BoolTensor": "torch.bool",
}
