"""TP019: on the cpu target, a script's hint that a CUDA device goes unused is dropped."""

import subprocess
import sys
from pathlib import Path

from torchport import targets
from torchport.migrate import migrate_source

SOURCE = (Path(__file__).parent / "golden" / "gpu_hints.py").read_bytes()


def _migrated(target: str) -> str:
    return migrate_source(SOURCE, targets.get(target), "gpu_hints.py").source.decode()


def test_the_migrated_script_runs_on_the_cpu_without_telling_of_a_cuda_device(tmp_path):
    script = tmp_path / "gpu_hints.py"
    script.write_text(_migrated("cpu"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("FINAL") and "CUDA device" not in done.stdout + done.stderr


def test_the_test_that_chose_the_hint_is_kept_where_it_guards_other_code():
    migrated = _migrated("cpu")
    assert "if torch.cpu.is_available():\n    if args.cuda:\n        torch.manual_seed(args.seed)\n" in migrated
    assert "and not args.cuda" not in migrated  # (an `if` left with nothing in it goes)
    assert "    # a GPU left idle?\n    dtype = torch.FloatTensor\n" in migrated  # (its comment stays)


def test_targets_with_a_device_keep_the_hint():
    for target in ("accelerator", "npu"):
        assert _migrated(target).count("You have a CUDA device") == 3
