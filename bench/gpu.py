"""The GPU check (bench/gpu.sh): every bundled CUDA example on a real CUDA device, as written, after
`torchport migrate --target accelerator`, and under `torchport run --target accelerator`; then the
optimizer bench on the GPU and the run-time overhead bench.

One table: each example's median step time as written (the peer, measured in the same run) beside
each torchport output's, with the ratio. The DDP example runs under torchrun with one process per
GPU. Every command has its own time limit, so the whole check stays under 8 minutes.

    python bench/gpu.py [--budget 420]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TIMER = ROOT / "bench" / "step_timer.py"
MODES = ("original", "migrated", "run")


def cuda_devices() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def example_command(script: Path, out: Path, mode: str, gpus: int) -> list[str]:
    timed = [str(TIMER), "--out", str(out), str(script)]
    if script.name == "ddp_train.py":
        timed = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(gpus), *timed]
    if mode == "run":
        return [sys.executable, "-m", "torchport", "run", "--target", "accelerator",
                "--log", str(out.with_suffix(".log")), *timed]
    return [sys.executable, *timed]


def time_example(script: Path, mode: str, work: Path, gpus: int, limit: float) -> tuple[str, float | None]:
    """(the FINAL line or why it failed, the median step time in ms)."""
    out = work / f"{script.stem}.{mode}.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT / "src")}
    try:
        done = subprocess.run(example_command(script, out, mode, gpus), cwd=script.parent, env=env,
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"timed out after {limit:.0f} s", None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("FINAL "):
        errors = done.stderr.strip().splitlines()
        return (errors[-1] if errors else f"exit {done.returncode}")[:80], None
    median = json.loads(out.read_text())["median_ms"] if out.exists() else None
    return "ok", median


def migrate(work: Path) -> Path:
    out = work / "accelerator"
    subprocess.run([sys.executable, "-m", "torchport", "migrate", str(EXAMPLES), "-o", str(out),
                    "--target", "accelerator"], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return out


def cell(status: str, ms: float | None, peer: float | None) -> str:
    if status != "ok":
        return f"FAIL: {status}"
    if ms is None:
        return "ok (no steps timed)"
    return f"{ms:8.2f} ms" + (f"  {ms / peer:5.2f}x" if peer else "")


def table(rows: dict[str, dict[str, tuple[str, float | None]]]) -> str:
    header = f"| {'example':<24} | {'as written (CUDA)':>17} | {'migrate accelerator':>21} | {'run accelerator':>21} |"
    lines = [header, "|" + "|".join("-" * len(part) for part in header.strip("|").split("|")) + "|"]
    for name, results in rows.items():
        peer = results["original"][1]
        lines.append(f"| {name:<24} | {cell(*results['original'], None):>17} | "
                     f"{cell(*results['migrated'], peer):>21} | {cell(*results['run'], peer):>21} |")
    return "\n".join(lines)


def bench(script: str, args: list[str], limit: float) -> str:
    """Run another bench script, printing its output; its last line, or why it failed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    try:
        done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True,
                              text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return f"{script}: timed out after {limit:.0f} s"
    print(done.stdout.rstrip())
    if done.returncode != 0:
        return f"{script}: exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1]}"
    return f"{script}: done"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=420, help="seconds for the whole check (default 420)")
    options = parser.parse_args()
    gpus = cuda_devices()
    if not gpus:
        print("bench/gpu.py: no CUDA device here: nothing to check")
        return 0
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="torchport-gpu-"))
    try:
        migrated = migrate(work)
        scripts = sorted(EXAMPLES.glob("*.py"))
        each = options.budget * 0.6 / (len(scripts) * len(MODES))
        rows = {}
        for script in scripts:
            sources = {"original": script, "migrated": migrated / script.name, "run": script}
            rows[script.stem] = {mode: time_example(sources[mode], mode, work, gpus, each) for mode in MODES}
        print(table(rows))
        left = options.budget - (time.monotonic() - started)
        print(bench("optim.py", ["--device", "cuda", "--quick"], left * 0.6))
        print(bench("runtime.py", ["--rounds", "10"], options.budget - (time.monotonic() - started)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = sum(status != "ok" for results in rows.values() for status, _ in results.values())
    print(f"{len(rows) * len(MODES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
