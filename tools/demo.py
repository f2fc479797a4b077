"""`make demo`: migrate the bundled CUDA examples to the CPU and to device-agnostic code, run them
here (the DDP one under torchrun with two processes), print what changed, then what an NPU port
should also change for speed (`torchport analyze --target npu`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
OUT = ROOT / "demo_out"
TARGETS = ["cpu", "accelerator"]


def run(command: list[str], cwd: Path) -> tuple[bool, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    lines = done.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if done.returncode != 0:
        errors = done.stderr.strip().splitlines()
        return False, errors[-1] if errors else f"exit {done.returncode}"
    return True, last


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)  # demo_out/ is ours: regenerated on every run
    torchrun = str(Path(sys.executable).with_name("torchrun"))
    failures = 0
    for target in TARGETS:
        out = OUT / target
        print(f"\n$ torchport migrate examples -o {out.relative_to(ROOT)} --target {target}")
        subprocess.run([sys.executable, "-m", "torchport", "migrate", str(EXAMPLES), "-o", str(out), "--target", target], check=True)
        for script in sorted(out.glob("*.py")):
            if script.name == "ddp_train.py":
                command = [torchrun, "--standalone", "--nproc_per_node", "2", script.name]
                label = f"torchrun --nproc_per_node 2 {script.name}"
            else:
                command = [sys.executable, script.name]
                label = f"python {script.name}"
            started = time.perf_counter()
            ok, line = run(command, out)
            failures += not ok
            print(f"  {'ok  ' if ok else 'FAIL'} {label:<48} {time.perf_counter() - started:5.1f}s  {line}")
        summary = json.loads((out / "torchport_report" / "summary.json").read_text())
        print(f"  report: {summary['changes']} changes in {summary['files_changed']} files, "
              f"{summary['unsupported']} unsupported, {summary['notes']} notes -> {out.relative_to(ROOT)}/torchport_report/")
    analysis = OUT / "analysis_npu"
    print(f"\n$ torchport analyze examples -o {analysis.relative_to(ROOT)} --target npu")
    subprocess.run([sys.executable, "-m", "torchport", "analyze", str(EXAMPLES), "-o", str(analysis), "--target", "npu"],
                   check=True)
    print(f"\nSee a diff with: {diff_hint()}")
    return 1 if failures else 0


def diff_hint() -> str:
    """The command that shows the npu diff, as typed in a fresh shell where the demo ran: the
    venv's torchport by its path (nothing puts it on PATH), the examples relative to here."""
    script = Path(sys.executable).with_name("torchport")
    torchport = _typed(script) if script.exists() else f"{_typed(Path(sys.executable))} -m torchport"
    return f"{torchport} migrate {_typed(EXAMPLES)} --diff --target npu"


def _typed(path: Path) -> str:
    """`path` as typed from the current folder: relative below it, absolute elsewhere."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    raise SystemExit(main())
