"""Run-time migration overhead: CUDA training steps under `torchport run --target cpu` versus the
same steps written natively for the CPU, in one process, interleaved.

Two bundled examples are used: the MLP of examples/amp_classifier.py (tiny steps: the worst case
for per-call overhead) and the CNN of examples/cnn_benchmark.py. Their training step is
bench/_cuda_steps.py, in the examples' CUDA style (`.cuda()`, `.to("cuda")`,
`torch.cuda.amp.autocast()`, `torch.cuda.amp.GradScaler()`, `torch.cuda.synchronize()`). The CUDA
step runs as it is under `torchport.runtime.apply("cpu")`, the machinery behind `torchport run`;
the native side is that file as `torchport migrate --target cpu` writes it, migrated here. So both
sides do the same work on every host: bfloat16 autocast where the CPU computes bfloat16 natively,
float32 where it does not (`SIMULATE_NATIVE_BF16=0 PYTHONPATH=tests/cpu_bf16` runs the bench
as on such a CPU). Blocks of steps alternate between the two; each adjacent pair gives a ratio, and
the median ratio is reported.

    python bench/runtime.py [--rounds 40] [--steps 10] [--warmup 40]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from _migrated import load, migrated
from torchport import runtime

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STEPS = Path(__file__).resolve().with_name("_cuda_steps.py")


def example_module(name: str):
    """Import an example for its model class (its main() is not run)."""
    return load(EXAMPLES / f"{name}.py", f"example_{name}")


def steps(out: Path):
    """The CUDA steps module, and the same file migrated to the CPU (written under `out`)."""
    cuda = load(STEPS, "cuda_steps")
    return cuda, load(migrated(STEPS, "cpu", out), "cuda_steps_migrated_to_cpu")


CLOCK = time.perf_counter  # main() switches to the thread's CPU clock when torch runs one thread


def timed_block(step, state, batches) -> list[float]:
    """Per-step times of one block. The garbage collector runs before the block, not inside it:
    applying and undoing the runtime for every block allocates enough to trigger collections
    that a real run, which applies it once, would not see."""
    gc.collect()
    gc.disable()
    try:
        times = []
        for x, y in batches:
            start = CLOCK()
            step(*state, x, y)
            times.append(CLOCK() - start)
        return times
    finally:
        gc.enable()


@contextlib.contextmanager
def ported(log: str | None):
    """The runtime applied for the CPU, as `torchport run --target cpu` does (its stderr summary
    line, printed at every undo, is kept out of the report)."""
    runtime.apply("cpu", log=log)
    try:
        yield
    finally:
        with contextlib.redirect_stderr(io.StringIO()):
            runtime.undo()


def compare(name, make_model, batches, rounds: int, warmup: int, log: str | None, cuda, native):
    cpu_step, cuda_step = native.step, cuda.step
    native_state = native.setup(make_model)
    with ported(log):
        cuda_state = cuda.setup(make_model)
    for _ in range(warmup):  # oneDNN, autocast and optimizer warm-up; a few dozen steps on a CPU
        timed_block(cpu_step, native_state, batches[:1])
        with ported(log):
            timed_block(cuda_step, cuda_state, batches[:1])
    native, patched, ratios = [], [], []
    for round_number in range(rounds):
        # Adjacent blocks see the same machine load; the order alternates so neither side is
        # always first. Each round gives one paired ratio; the figure is their median.
        def run_native():
            return timed_block(cpu_step, native_state, batches)

        def run_patched():
            with ported(log):
                return timed_block(cuda_step, cuda_state, batches)

        if round_number % 2:
            ported_times, native_times = run_patched(), run_native()
        else:
            native_times, ported_times = run_native(), run_patched()
        native += native_times
        patched += ported_times
        ratios.append(statistics.median(ported_times) / statistics.median(native_times))
    native_ms = statistics.median(native) * 1000
    patched_ms = statistics.median(patched) * 1000
    ratio = statistics.median(ratios)
    print(f"{name:<15} native cpu {native_ms:7.3f} ms/step | cuda under torchport run --target cpu "
          f"{patched_ms:7.3f} ms/step | {(patched_ms - native_ms) * 1000:+7.1f} us/step | "
          f"overhead ratio {ratio:.3f} (median of {rounds} paired rounds)")
    return ratio


def per_call_cost(calls: int = 20000) -> None:
    """What one patched call costs: `x.to("cuda")` redirected versus `x.to("cpu")` unpatched."""
    x = torch.ones(1)

    def loop(device):
        start = time.perf_counter()
        for _ in range(calls):
            x.to(device)
        return (time.perf_counter() - start) / calls * 1e6

    native = min(loop("cpu") for _ in range(5))
    with ported(None):
        redirected = min(loop("cuda") for _ in range(5))
        untouched = min(loop("cpu") for _ in range(5))
    print(f"per call: x.to('cpu') {native:.2f} us unpatched, {untouched:.2f} us patched; "
          f"x.to('cuda') redirected {redirected:.2f} us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="paired blocks (one per side)")
    parser.add_argument("--steps", type=int, default=10, help="steps per block")
    parser.add_argument("--warmup", type=int, default=40, help="untimed steps per side first")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: with more, a busy machine stalls every step "
                             "at the threads' barrier and the noise swamps the figure)")
    parser.add_argument("--log", default=None, help="write the call-site log here (default: none)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    global CLOCK
    if args.threads == 1:  # all the work is on this thread: count its CPU time, not the busy
        CLOCK = time.thread_time  # machine's other processes

    g = torch.Generator().manual_seed(0)
    mlp = example_module("amp_classifier").MLP
    mlp_batches = [(torch.randn(64, 32, generator=g), torch.randint(0, 4, (64,), generator=g))
                   for _ in range(args.steps)]
    cnn = example_module("cnn_benchmark").SmallCNN
    cnn_batches = [(torch.randn(16, 3, 16, 16, generator=g), torch.randint(0, 4, (16,), generator=g))
                   for _ in range(args.steps)]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, clock {CLOCK.__name__}, "
          f"{args.rounds} rounds x {args.steps} steps per side")
    with tempfile.TemporaryDirectory(prefix="torchport_bench_") as out:
        cuda, native = steps(Path(out))
        print(f"native side: {STEPS.name} migrated to cpu; autocast {'on' if native.CPU_BF16 else 'off'} "
              f"(native bfloat16 {'yes' if native.CPU_BF16 else 'no'})")
        ratios = [compare("amp_classifier", mlp, mlp_batches, args.rounds, args.warmup, args.log, cuda, native),
                  compare("cnn_benchmark", cnn, cnn_batches, args.rounds, args.warmup, args.log, cuda, native)]
    per_call_cost()
    print(f"worst overhead ratio {max(ratios):.3f} (goal: <= 1.03)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
