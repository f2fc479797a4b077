"""Single-card scripts made multi-card (`distribute_source`, then migrated to the CPU) run as one
process and as two under torchrun (gloo): rank 0 alone prints and saves, and with the same data on
each rank (these scripts hold their batches in lists, which no sampler shards) the two-rank run
ends with the weights of the one-process run. The mp.spawn script runs one rank per process the
launcher started."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchport import targets
from torchport.distribute import distribute_source
from torchport.migrate import migrate_source

pytestmark = pytest.mark.fidelity  # processes and torchrun: `make fidelity`

SCRIPTS = Path(__file__).resolve().parent / "scripts"
TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"


def prepared(name: str, folder: Path) -> Path:
    cuda = distribute_source((SCRIPTS / name).read_text(), name).source
    migrated = migrate_source(cuda.encode(), targets.get("cpu"), name)
    assert migrated.error is None
    path = folder / name
    path.write_bytes(migrated.source)
    return path


def ran(command: list[str], folder: Path) -> list[str]:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize(("name", "saved"), [("single_card.py", "net.pt"), ("data_parallel.py", "dp.pt")])
def test_two_ranks_train_as_one_process_did_and_rank_zero_alone_prints_and_saves(name, saved, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    alone = ran([sys.executable, str(prepared(name, one))], one)
    both = ran([TORCHRUN, "--standalone", "--nproc_per_node", "2", str(prepared(name, two))], two)
    assert both == alone  # every line once (rank 0's), the same final weights
    assert alone[-1].startswith("FINAL ") and (one / saved).exists() and (two / saved).exists()


def test_an_mp_spawn_script_runs_one_rank_per_launched_process(tmp_path):
    script = prepared("spawned.py", tmp_path)
    assert 'if "LOCAL_RANK" in os.environ:' in script.read_text()  # (without a launcher it spawns as before)
    assert ran([sys.executable, str(script)], tmp_path) == ["rank 0 of 1 done"]
    both = "".join(ran([TORCHRUN, "--standalone", "--nproc_per_node", "2", str(script)], tmp_path))
    # (both ranks print, to one pipe: their lines may run together)
    assert both.count("rank 0 of 2 done") == 1 and both.count("rank 1 of 2 done") == 1 and both.count("done") == 2
