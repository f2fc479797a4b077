"""Element types, spelt one way (what a device cannot hold is the target's: `Advice.dtype_limits`).

The profiler spells types as C++ does ("float", "c10::Half", "long int"); torch as "torch.float32".
ops.json uses torch's names without the prefix, so a trace and a capture of the same run agree.
"""

from __future__ import annotations

CPP_NAMES = {
    "float": "float32",
    "double": "float64",
    "c10::Half": "float16",
    "c10::BFloat16": "bfloat16",
    "c10::Float8_e4m3fn": "float8_e4m3fn",
    "c10::Float8_e5m2": "float8_e5m2",
    "long int": "int64",
    "long": "int64",
    "int": "int32",
    "short int": "int16",
    "short": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "unsigned short": "uint16",
    "unsigned int": "uint32",
    "unsigned long": "uint64",
    "bool": "bool",
    "c10::complex<c10::Half>": "complex32",
    "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
}


def from_cpp(name: str) -> str | None:
    """The torch name of a profiler "Input type", or None for what is not a tensor's element type
    ("Scalar", "ScalarList", "TensorList", "")."""
    return CPP_NAMES.get(name)


def from_torch(dtype: object) -> str:
    """'torch.float32' -> 'float32'."""
    return str(dtype).removeprefix("torch.")

