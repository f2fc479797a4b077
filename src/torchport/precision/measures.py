"""How far apart two samples of the same tensor are, and how far a precision lets them be.

The measures are those precision tools report: cosine similarity, the largest absolute and
relative error, the relative error of the whole (|a - b| / |a|), and the share of elements whose
relative error passes 1/1000 and 5/1000. A call is within tolerance while its relative error of
the whole stays under its precision's: the lowest precision among its two dtypes and the
autocast dtypes it ran under (float32 against a bfloat16 autocast run is judged at bfloat16)."""

from __future__ import annotations

import math

# The relative error of the whole that a precision allows between two runs: float32 1e-4 (its
# "ten-thousandth": kernels and summation orders apart); float16 2^-6 and bfloat16 2^-3 (cosine
# about 0.992), for what the lower precision adds up to over a few layers, a step, and the backward
# through activations whose elements near zero change sign (a ReLU's mask): measured at 7e-2 on a
# three-layer classifier's first backward under bfloat16 autocast.
TOLERANCE = {"float64": 1e-7, "float32": 1e-4, "float16": 2.0 ** -6, "bfloat16": 2.0 ** -3}
DEFAULT_TOLERANCE = TOLERANCE["float32"]


def tolerance(*dtypes: str | None) -> float:
    """The tolerance of the lowest precision among `dtypes` (None: not given)."""
    return max((TOLERANCE.get(dtype, DEFAULT_TOLERANCE) for dtype in dtypes if dtype), default=DEFAULT_TOLERANCE)


def strictest(*dtypes: str | None) -> float:
    """The tolerance of the highest precision among `dtypes`: two runs that both kept it."""
    return min((TOLERANCE.get(dtype, DEFAULT_TOLERANCE) for dtype in dtypes if dtype), default=DEFAULT_TOLERANCE)


def lowest(*dtypes: str | None) -> str:
    """The name of the lowest precision among `dtypes`."""
    given = [dtype for dtype in dtypes if dtype]
    return max(given, key=lambda dtype: TOLERANCE.get(dtype, DEFAULT_TOLERANCE)) if given else "float32"


def measure(a, b) -> dict:
    """The measures between samples `a` and `b` (same length), over the elements finite in both."""
    import torch

    a, b = a.double(), b.double()
    finite = torch.isfinite(a) & torch.isfinite(b)
    a, b = a[finite], b[finite]
    if not a.numel():
        return {"cosine": None, "max_abs": None, "max_rel": None, "rel_norm": 0.0, "beyond_1e3": 0.0, "beyond_5e3": 0.0}
    difference = (a - b).abs()
    size = a.abs()
    floor = max(float(size.max()) * 1e-6, 1e-30)  # (a zero element: its error is judged against the tensor's scale)
    relative = difference / size.clamp_min(floor)
    a_norm, b_norm, d_norm = float(a.norm()), float(b.norm()), float(difference.norm())
    if a_norm == 0.0 or b_norm == 0.0:
        cosine = 1.0 if a_norm == b_norm else 0.0
    else:
        cosine = float((a @ b) / (a_norm * b_norm))
    rel_norm = d_norm / a_norm if a_norm else (0.0 if d_norm == 0.0 else math.inf)
    return {"cosine": cosine, "max_abs": float(difference.max()), "max_rel": float(relative.max()),
            "rel_norm": rel_norm, "beyond_1e3": float((relative > 1e-3).double().mean()),
            "beyond_5e3": float((relative > 5e-3).double().mean())}


def relative(a: float | None, b: float | None) -> float:
    """|a - b| / |a| of two numbers (a loss, a gradient norm); inf where one is missing or not finite."""
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return 0.0 if a == b else math.inf
    if a == b:
        return 0.0
    return abs(a - b) / abs(a) if a else math.inf
