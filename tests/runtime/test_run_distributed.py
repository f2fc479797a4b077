"""torchport run --distributed: options, the in-memory rewrite (a stand-in for the steps:
_fake_distribute), tracebacks at the original's lines, and the torchrun it starts itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _fake_distribute  # noqa: E402

SCRIPT = '''import torch


def main():
    x = torch.ones(2).cuda()
    print("world", WORLD_SIZE, "rank", LOCAL_RANK, x.device.type)
    if len(__import__("sys").argv) > 1:
        raise ValueError("boom")


if __name__ == "__main__":
    main()
'''


@pytest.fixture(autouse=True)
def environment_kept():
    """`run` sets TORCHPORT_TARGET and TORCHPORT_LOG for its children: not for later tests'."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture
def fake_steps(monkeypatch):
    _fake_distribute.install(monkeypatch)


@pytest.fixture
def no_launcher(monkeypatch):
    for name in ("LOCAL_RANK", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("arguments, said", [
    (["--nproc-per-node", "2"], "--nproc-per-node goes with --distributed"),
    (["--distributed-batch", "per-rank"], "--distributed-batch goes with --distributed"),
    (["--distributed", "--nproc-per-node", "0"], "--nproc-per-node 0: give a number of processes, 1 or more"),
    (["--distributed", "--nproc-per-node", "two"], "--nproc-per-node two: give a number of processes, 1 or more"),
    (["--distributed", "--distributed-batch", "local"], "--distributed-batch local: choose global or per-rank"),
])
def test_option_errors(cli, script, arguments, said):
    status, _, err = cli("run", "--target", "cpu", *arguments, script)
    assert status == 2
    assert err.strip() == f"torchport run: error: {said}"


def test_run_reads_the_batch_modes_without_importing_the_steps():
    """`run`'s start does not pay for LibCST: --distributed-batch's choices live apart from the steps."""
    import subprocess

    code = ("import sys, torchport.runtime.command as command\n"
            "print(command.BATCH_MODES == ('global', 'per-rank'), 'torchport.distribute.driver' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_distributed_module_refused(cli):
    status, _, err = cli("run", "--distributed", "-m", "json.tool")
    assert status == 2 and "--distributed runs a script" in err


def test_one_process_without_launcher(cli, script, tmp_path, fake_steps, no_launcher, runtime_undone):
    status, out, _ = cli("run", "--target", "cpu", "--log", tmp_path / "log", "--distributed", script)
    assert status == 0
    assert "world 1 rank 0 cpu" in out


def test_traceback_at_the_original_lines(cli, script, tmp_path, fake_steps, no_launcher, runtime_undone):
    status, _, err = cli("run", "--target", "cpu", "--log", tmp_path / "log", "--distributed", script, "fail")
    assert status == 1
    assert f'File "{script}", line 12, in <module>\n    main()' in err
    assert f'File "{script}", line 8, in main\n    raise ValueError("boom")' in err
    assert "torchport/runtime" not in err  # (our own frames are dropped)


def test_left_alone_is_said(cli, tmp_path, fake_steps, no_launcher, runtime_undone):
    path = tmp_path / "ddp.py"
    path.write_text("import torch\nif False:\n    torch.distributed.init_process_group('gloo')\nprint('ran')\n")
    status, out, err = cli("run", "--target", "cpu", "--log", tmp_path / "log", "--distributed", path)
    assert status == 0 and "ran" in out
    assert f"{path} runs as it is (it starts its own process group)" in err


def test_a_failing_step_leaves_the_script_as_it_is(cli, script, tmp_path, monkeypatch, fake_steps, no_launcher,
                                                  runtime_undone):
    from torchport.distribute import driver

    def broken(source, plan, options):
        raise RuntimeError("a bug")

    monkeypatch.setattr(driver, "STEPS", (broken,))
    script.write_text("import torch\nprint('ran', torch.ones(1).cuda().device.type)\n")
    status, out, err = cli("run", "--target", "cpu", "--log", tmp_path / "log", "--distributed", script)
    assert status == 0 and "ran cpu" in out
    assert "runs as it is (the rewrite failed: internal error (RuntimeError: a bug))" in err


def test_starts_torchrun_on_itself(cli, script, tmp_path, monkeypatch, no_launcher):
    from torchport.runtime import distributed
    from torchport.runtime.autoload import RANKS_LOG_ENV

    calls = []

    class Torchrun:
        def __init__(self, command, env):
            calls.append((command, env))

        def wait(self, timeout=None):
            return 3

    monkeypatch.setattr(distributed.subprocess, "Popen", Torchrun)
    status, _, _ = cli("run", "--target", "cpu", "--log", tmp_path / "my.log", "--distributed",
                       "--nproc-per-node", "2", "--distributed-batch", "per-rank", script, "--lr", "1")
    assert status == 3  # (torchrun's)
    [(command, env)] = calls
    assert command == [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                       "-m", "torchport", "run", "--distributed", "--target", "cpu",
                       "--distributed-batch", "per-rank", str(script), "--lr", "1"]
    assert env[RANKS_LOG_ENV] == str(tmp_path / "my.log")


def test_under_a_launcher_it_is_one_rank(cli, script, tmp_path, monkeypatch, fake_steps, runtime_undone):
    from torchport.runtime import distributed

    monkeypatch.setattr(distributed.subprocess, "Popen", lambda *a, **k: pytest.fail("started torchrun under torchrun"))
    monkeypatch.setenv("LOCAL_RANK", "0")
    status, out, _ = cli("run", "--target", "cpu", "--log", tmp_path / "log", "--distributed", "--nproc-per-node", "2", script)
    assert status == 0 and "rank 0" in out


@pytest.fixture
def runtime_undone():
    yield
    from torchport import runtime

    runtime.undo()


@pytest.mark.fidelity
def test_two_processes_train_as_one(tmp_path, run_tool):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "migrate"))
    from test_distributed_cli import TRAINER, same_weights, steps_landed

    if not steps_landed():
        pytest.skip("the distribute steps have not landed")
    (tmp_path / "train.py").write_text(TRAINER)
    (tmp_path / "one").mkdir()
    single = run_tool([sys.executable, "-m", "torchport", "run", "--target", "cpu", "../train.py", "--epochs", "2"],
                      tmp_path / "one")
    assert single.returncode == 0, single.stderr
    ran = run_tool([sys.executable, "-m", "torchport", "run", "--target", "cpu", "--distributed", "--nproc-per-node", "2",
                    "train.py", "--epochs", "2"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert [line.split(" loss")[0] for line in ran.stdout.splitlines() if line.startswith("epoch")] == ["epoch 0", "epoch 1"]
    assert (tmp_path / "torchport_run.rank1.log").exists()
    same_weights(tmp_path / "one" / "model.pt", tmp_path / "model.pt")


def test_ctrl_c_waits_for_torchrun_to_stop_its_processes(monkeypatch):
    from torchport.runtime import distributed

    waited = []

    class Torchrun:
        def __init__(self, command, env):
            pass

        def wait(self, timeout=None):
            waited.append(timeout)
            if len(waited) == 1:
                raise KeyboardInterrupt
            return -2

        def kill(self):
            pytest.fail("killed a torchrun that was stopping")

    monkeypatch.setattr(distributed.subprocess, "Popen", Torchrun)
    assert distributed.launch(2, ["run", "--distributed", "x.py"], "log") == 130
    assert waited == [None, distributed.STOP_S]
