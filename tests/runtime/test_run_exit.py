"""How `torchport run` ends, as separate processes: as python would for the program (its exit
status, its traceback from its own frame, 130 on Ctrl-C), and with one line, not a traceback, when
torch is missing or the reader of a listing leaves early."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _terminal import default_sigint

import torchport

RUN = [sys.executable, "-m", "torchport", "run", "--target", "cpu"]

PROGRAM = textwrap.dedent("""
    import sys
    import helper
    how = sys.argv[1]
    if how == "status":
        sys.exit(3)
    if how == "message":
        sys.exit("stopped: no data")
    if how == "raise":
        helper.fail()
    print("ran to the end")
""")
HELPER = textwrap.dedent("""
    def fail():
        try:
            {}["key"]
        except KeyError as error:
            raise ValueError("bad config") from error
""")
FAIL_LINE = PROGRAM.splitlines().index("    helper.fail()") + 1


def _write_program(directory: Path) -> str:
    (directory / "helper.py").write_text(HELPER)
    (directory / "program.py").write_text(PROGRAM)
    return str(directory / "program.py")


def _last_traceback(stderr: str) -> str:
    return stderr.split("Traceback (most recent call last):\n")[-1]


@pytest.mark.parametrize("how, status, stderr", [("end", 0, ""), ("status", 3, ""),
                                                 ("message", 1, "stopped: no data\n")])
def test_the_exit_status_is_the_programs(tmp_path, run_tool, how, status, stderr):
    _write_program(tmp_path)
    result = run_tool([*RUN, "program.py", how], tmp_path)
    assert (result.returncode, result.stderr) == (status, stderr)
    assert ("ran to the end" in result.stdout) == (how == "end")


def test_a_traceback_is_pythons_own_from_the_programs_frame(tmp_path, run_tool):
    program = _write_program(tmp_path)
    ported = run_tool([*RUN, program, "raise"], tmp_path)
    native = run_tool([sys.executable, program, "raise"], tmp_path)
    assert ported.returncode == native.returncode == 1
    assert _last_traceback(ported.stderr).startswith(f'  File "{program}", line {FAIL_LINE}, in <module>\n')
    assert "The above exception was the direct cause of the following exception:" in ported.stderr
    assert ported.stderr == native.stderr  # chained exceptions and the helper's frames included


@pytest.mark.fidelity  # (run -m of a module, three processes: make test keeps a script's exit statuses)
@pytest.mark.parametrize("how, status, stderr", [("status", 3, ""), ("message", 1, "stopped: no data\n"),
                                                 ("raise", 1, None)])
def test_a_module_ends_as_a_script_does(tmp_path, run_tool, how, status, stderr):
    program = _write_program(tmp_path)
    result = run_tool([*RUN, "-m", "program", how], tmp_path)
    assert result.returncode == status, result.stderr
    if stderr is not None:
        assert result.stderr == stderr
    else:  # no frames of runpy or of torchport above the module's own
        assert _last_traceback(result.stderr).startswith(f'  File "{program}", line {FAIL_LINE}, in <module>\n')
        assert "runpy" not in result.stderr and "runtime/command.py" not in result.stderr
        assert result.stderr.endswith("ValueError: bad config\n")


def _environment(**changes) -> dict:
    environment = dict(os.environ)
    environment.pop("TORCHPORT_TARGET", None)
    environment["PYTHONWARNINGS"] = "ignore::UserWarning"  # torch's "Failed to initialize NumPy"
    environment.update(changes)
    return environment


def _signalled(directory: Path, signum: int) -> subprocess.CompletedProcess:
    """Run a program that waits after saying it is ready; send it `signum` once it is."""
    (directory / "wait.py").write_text('import time\nprint("ready", flush=True)\ntime.sleep(60)\n')
    process = subprocess.Popen([*RUN, "wait.py"], cwd=directory, env=_environment(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
    try:
        ready = process.stdout.readline()
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert ready == "ready\n", stderr
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_ctrl_c_is_status_130_and_one_line(tmp_path):
    result = _signalled(tmp_path, signal.SIGINT)
    assert (result.returncode, result.stderr) == (130, "torchport run: interrupted\n")


def test_sigterm_ends_it_as_it_ends_python(tmp_path):
    result = _signalled(tmp_path, signal.SIGTERM)
    assert (result.returncode, result.stderr) == (-signal.SIGTERM, "")


def _one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_without_torch_it_says_so_in_one_line(tmp_path, run_tool):
    (tmp_path / "train.py").write_text("print('ran')\n")
    # -S: no site-packages, so no torch; torchport alone comes back on the path, wherever it is installed.
    path = tmp_path / "path"
    path.mkdir()
    (path / "torchport").symlink_to(Path(torchport.__file__).parent, target_is_directory=True)
    result = run_tool([sys.executable, "-S", "-m", "torchport", "run", "train.py"], tmp_path,
                      env={"PYTHONPATH": str(path)})
    _one_line_error(result, "torchport run: error: PyTorch is not installed in this Python", "install torch")


def test_a_torch_that_fails_to_import_is_one_line_too(tmp_path, run_tool):
    (tmp_path / "train.py").write_text("print('ran')\n")
    broken = tmp_path / "path" / "torch"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise OSError("libtorch_cuda.so: cannot open shared object file")\n')
    result = run_tool([*RUN, "train.py"], tmp_path, env={"PYTHONPATH": str(tmp_path / "path")})
    _one_line_error(result, "PyTorch fails to import", "libtorch_cuda.so: cannot open shared object file")


@pytest.mark.fidelity  # (three pipelines of processes)
@pytest.mark.parametrize("listing, reader", [("", "head -3"), ("--target npu", "head -3"), ("", "true")])
def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path, listing, reader):
    command = f"{shlex.join([sys.executable, '-m', 'torchport', 'targets'])} {listing} | {reader}"
    environment = _environment()
    environment.pop("PYTHONUNBUFFERED", None)  # stdout into a pipe is block-buffered, as for a user
    for _ in range(10):
        result = subprocess.run(["bash", "-c", command + "; exit ${PIPESTATUS[0]}"], cwd=tmp_path,
                                env=environment, capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stderr) == (0, "")
