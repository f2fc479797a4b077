"""--distributed-batch's choices, apart from the steps (which need LibCST: `run` reads these
without importing it)."""

BATCH_MODES = ("global", "per-rank")
