"""Dynamic shapes: find the call sites whose shapes change from step to step, and fix them.

    from torchport.shapes import DETECTOR
    for batch in DETECTOR.start(loader):   # Ascend's detector, same names; `torchport shapes
        ...                                # script.py` makes this edit itself, in memory
    # at exit: dynamic_shape_report.csv (Ascend's columns, plus ours)

    DataLoader(ds, collate_fn=pad_to_buckets([16, 32, 64]))   # N shapes -> 3

`instrument_source(source, path)` (the copy `torchport analyze --mode dynamic-shape` writes) and
`find_training_loops` need no torch: importing this package does not import it; DETECTOR,
ShapeDetector and pad_to_buckets load their modules on first use.
"""

from __future__ import annotations

from torchport.shapes.loops import find_training_loops, instrument_source

__all__ = ["DETECTOR", "ShapeDetector", "find_training_loops", "instrument_source", "pad_to_buckets"]

_LAZY = {"DETECTOR": "detector", "ShapeDetector": "detector", "StepLimit": "detector",
         "pad_to_buckets": "buckets"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"torchport.shapes.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'torchport.shapes' has no attribute {name!r}")
