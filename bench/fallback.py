"""The accelerator target's CPU fallback: a CUDA trainer migrated to `accelerator` and run on a
CPU is as fast as the same trainer migrated to `cpu`, where the CPU computes bfloat16 natively
and where it does not (there autocast would run bfloat16 several times slower than float32:
both outputs must keep it off).

bench/_amp_gpt.py, a nanoGPT-style model trained with torch.cuda.amp.autocast and GradScaler, is
migrated to both targets. Each case runs in a fresh process (a migrated file reads the CPU's
capabilities when it is imported): as this host is, and with native bfloat16 forced off
(tests/cpu_bf16, the test suite's simulation of such a CPU). The process imports both outputs and
alternates blocks of their train_step; each adjacent pair of blocks gives a ratio accelerator /
cpu, and the median ratio is reported.

    python bench/fallback.py [--rounds 16] [--steps 4] [--warmup 8]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAINER = HERE / "_amp_gpt.py"
sys.path.insert(0, str(HERE.parent / "tests" / "cpu_bf16"))
import native_bf16  # noqa: E402  (tests/cpu_bf16: forces what torch.cpu.get_capabilities says)

GOAL = 1.05
# name -> native bfloat16 forced (None: as this host has it, or as SIMULATE_NATIVE_BF16 says)
CASES = {"this host": None, "no native bf16": False}


def timed_block(module, state, batches) -> float:
    """The median step time of one block (the collector runs between blocks, not in them)."""
    gc.collect()
    gc.disable()
    try:
        times = []
        for x, y in batches:
            start = time.thread_time()  # one torch thread: count its CPU time, not the machine's load
            module.train_step(*state, x, y)
            times.append(time.thread_time() - start)
        return statistics.median(times)
    finally:
        gc.enable()


def measure(out: Path, rounds: int, steps: int, warmup: int) -> None:
    """(In the case's own process.) Both outputs, interleaved: prints one line."""
    import torch

    from _migrated import load

    torch.set_num_threads(1)
    cpu = load(out / "cpu" / TRAINER.name, "amp_gpt_cpu")
    accelerator = load(out / "accelerator" / TRAINER.name, "amp_gpt_accelerator")
    sides = [(cpu, cpu.build()), (accelerator, accelerator.build())]
    generator = torch.Generator().manual_seed(0)
    batches = [cpu.get_batch(generator) for _ in range(steps)]
    for module, state in sides:
        timed_block(module, state, batches[:1] * warmup)
    ratios, medians = [], {0: [], 1: []}
    for round_number in range(rounds):  # adjacent blocks see the same load; the order alternates
        order = (1, 0) if round_number % 2 else (0, 1)
        times = {side: timed_block(*sides[side], batches) for side in order}
        for side, median in times.items():
            medians[side].append(median)
        ratios.append(times[1] / times[0])
    native = any(torch.cpu.get_capabilities().get(f, False) for f in native_bf16.native_flags())
    cpu_ms, accelerator_ms = (statistics.median(medians[side]) * 1000 for side in (0, 1))
    autocast = [_autocast(module, state, batches[0]) for module, state in sides]
    same_work = "" if autocast[0] == autocast[1] else " UNEQUAL WORK"
    print(f"native bf16 {'yes' if native else 'no ':<3} | autocast: cpu output {autocast[0]}, "
          f"accelerator output {autocast[1]}{same_work} | cpu {cpu_ms:6.2f} ms/step, "
          f"accelerator {accelerator_ms:6.2f} ms/step | ratio {statistics.median(ratios):.3f} "
          f"(median of {rounds} paired rounds)", flush=True)


def _autocast(module, state, batch) -> str:
    """Whether autocast is on in the output's train_step: its model's output comes out below its
    weights' float32 (one more step, watched)."""
    model = state[0]
    seen = []
    hook = model.lm_head.register_forward_hook(lambda _module, _inputs, output: seen.append(output.dtype))
    try:
        module.train_step(*state, *batch)
    finally:
        hook.remove()
    return "on" if seen[0] != model.lm_head.weight.dtype else "off"


def run_case(name: str, native: bool | None, out: Path, args) -> float:
    env = native_bf16.environment(native) if native is not None else dict(os.environ)
    env["PYTHONWARNINGS"] = "ignore"
    command = [sys.executable, __file__, "--child", str(out), "--rounds", str(args.rounds),
               "--steps", str(args.steps), "--warmup", str(args.warmup)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"fallback.py: the {name} case failed:\n{done.stderr[-3000:]}")
    line = done.stdout.strip().splitlines()[-1]
    print(f"{name:<15} {line}", flush=True)
    return float(line.split("ratio ")[1].split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=16, help="paired blocks (one per side)")
    parser.add_argument("--steps", type=int, default=4, help="steps per block")
    parser.add_argument("--warmup", type=int, default=8, help="untimed steps per side first")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # one case, in its own process
    args = parser.parse_args()
    if args.child:
        measure(args.child, args.rounds, args.steps, args.warmup)
        return 0
    from _migrated import migrated

    print(f"{TRAINER.name} migrated to cpu and to accelerator, run on this CPU (1 thread, thread CPU clock), "
          f"{args.rounds} rounds x {args.steps} steps per side")
    with tempfile.TemporaryDirectory(prefix="torchport_bench_") as tmp:
        out = Path(tmp)
        for target in ("cpu", "accelerator"):
            migrated(TRAINER, target, out)
        ratios = [run_case(name, native, out, args) for name, native in CASES.items()]
    print(f"worst ratio accelerator / cpu {max(ratios):.3f} (goal: <= {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
