"""What CUDA's APIs are and what they mean, one module per concern, for every mechanism.

The rewriter, the run-time patcher and the analysers each act on the same CUDA APIs; what those
APIs are (their names, which argument is the device, which take the device type first) and how
a target's answer for them is derived (a function of a `Target`) are kept here once, so that no
mechanism keeps a list of its own. Target-independent: `targets/` says what a backend has. No
torch at import (the analysers and the rewriter run without it), no LibCST, no `targets` import
(the targets read this catalogue, never the other way round).
"""
