"""Dynamic shapes: find the call sites whose shapes change from step to step, and fix them.

`instrument_source(source, path)` (the copy `torchport analyze --mode dynamic-shape` writes) and
`find_training_loops` need no torch: importing this package does not import it.
"""

from __future__ import annotations

from torchport.shapes.loops import find_training_loops, instrument_source

__all__ = ["find_training_loops", "instrument_source"]
