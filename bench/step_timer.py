"""Run a training script as `python script.py args` would, and record the time of each optimizer step.

    python bench/step_timer.py --out times.json script.py [args ...]

A global optimizer-step hook (torch.optim's `register_optimizer_step_post_hook`) stamps the clock
after every `step()`, once the device has finished the step's work; the script itself is not
changed, so the original CUDA script, its migrated copy and the script under `torchport run` are
timed the same way. The JSON written to --out holds the step count and the median interval between
consecutive steps (the first `--skip` intervals, warm-up, are left out) in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where to write the step times (JSON)")
    parser.add_argument("--skip", type=int, default=3, help="warm-up intervals left out (default 3)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()

    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook

    stamps: list[float] = []

    def stamp(optimizer, args, kwargs):
        if torch.accelerator.is_available():
            torch.accelerator.synchronize()
        stamps.append(time.perf_counter())

    register_optimizer_step_post_hook(stamp)
    sys.argv = [options.script, *options.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(options.script)))
    status = 0
    try:
        runpy.run_path(options.script, run_name="__main__")
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    intervals = [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])][options.skip:]
    if os.environ.get("RANK", "0") != "0":  # under torchrun, rank 0 speaks for all
        return status
    with open(options.out, "w") as out:
        json.dump({"steps": len(stamps), "median_ms": statistics.median(intervals) if intervals else None}, out)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
