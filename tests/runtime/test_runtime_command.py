"""`torchport run`, `import torchport.auto` and TORCHPORT_TARGET, as separate processes."""

from __future__ import annotations

import sys
import textwrap

import pytest

CUDA_SCRIPT = textwrap.dedent("""
    import sys
    import torch
    x = torch.ones(2, device="cuda").cuda()
    torch.cuda.synchronize()
    print("ARGS", sys.argv[1:], "DEVICE", x.device.type, "AVAILABLE", torch.cuda.is_available())
""")


def _one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_usage_errors_are_one_line(tmp_path, run_tool):
    _one_line_error(run_tool(["torchport", "run"], tmp_path), "torchport run: error:", "script")
    _one_line_error(run_tool(["torchport", "run", "missing.py"], tmp_path), "no such script: missing.py")
    _one_line_error(run_tool(["torchport", "run", "-m", "no_such_module_x"], tmp_path), "no module named")
    (tmp_path / "x.py").write_text("")
    _one_line_error(run_tool(["torchport", "run", "--target", "npu", "x.py"], tmp_path),
                    "target npu is not available here: torch_npu is not installed")


def test_run_a_script_with_its_arguments_and_exit_status(tmp_path, run_tool):
    (tmp_path / "train.py").write_text(CUDA_SCRIPT + "raise SystemExit(3)\n")
    result = run_tool(["torchport", "run", "--target", "cpu", "--log", "my.log", "train.py", "--lr", "1"],
                      tmp_path)
    assert result.returncode == 3, result.stderr
    assert "ARGS ['--lr', '1'] DEVICE cpu AVAILABLE True" in result.stdout
    log = (tmp_path / "my.log").read_text()
    assert "train.py:4  torch.Tensor.cuda -> torch.Tensor.cpu [same]" in log
    assert "train.py:5  torch.cuda.synchronize -> (removed) [no-op]" in log


@pytest.mark.fidelity  # (run -m: make test keeps run of a script)
def test_run_a_module(tmp_path, run_tool):
    (tmp_path / "trainer.py").write_text(CUDA_SCRIPT)
    result = run_tool(["torchport", "run", "--target", "accelerator", "-m", "trainer", "--flag", "a"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ARGS ['--flag', 'a'] DEVICE cpu AVAILABLE False" in result.stdout  # as torch.accelerator says here, and migrate writes


@pytest.mark.fidelity  # (one more process of import torchport.auto)
def test_import_torchport_auto_under_torchport_run_keeps_one_log(tmp_path, run_tool):
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.empty_cache()\nimport torchport.auto\n"
                                       + CUDA_SCRIPT)
    result = run_tool(["torchport", "run", "--target", "cpu", "train.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    log = (tmp_path / "torchport_run.log").read_text()
    assert "train.py:2  torch.cuda.empty_cache" in log and "train.py:8  torch.cuda.synchronize" in log


def test_import_torchport_auto(tmp_path, run_tool):
    (tmp_path / "train.py").write_text("import torchport.auto\n" + CUDA_SCRIPT)
    result = run_tool([sys.executable, "train.py"], tmp_path, env={"TORCHPORT_TARGET": "cpu"})
    assert result.returncode == 0, result.stderr
    assert "DEVICE cpu AVAILABLE True" in result.stdout
    assert "torch.cuda.synchronize" in (tmp_path / "torchport_run.log").read_text()


@pytest.mark.fidelity  # (one more process of TORCHPORT_TARGET)
def test_the_environment_variable_alone_activates_it(tmp_path, run_tool):
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    result = run_tool([sys.executable, "train.py"], tmp_path,
                      env={"TORCHPORT_TARGET": "cpu", "TORCHPORT_LOG": "env.log"})
    assert result.returncode == 0, result.stderr
    assert "DEVICE cpu AVAILABLE True" in result.stdout
    assert (tmp_path / "env.log").exists()


def test_a_bad_environment_value_is_a_one_line_error(tmp_path, run_tool):
    result = run_tool([sys.executable, "-c", "import torch"], tmp_path, env={"TORCHPORT_TARGET": "gpu9"})
    _one_line_error(result, "TORCHPORT_TARGET=gpu9", "unknown target")


def test_code_python_cannot_compile_is_one_line_that_says_why_and_what_to_do(tmp_path, run_tool):
    # (a parameter named async: renaming async= arguments, as run does, does not make it valid)
    (tmp_path / "old.py").write_text("import torch\n\ndef load(x, async=False):\n    return x\n")
    _one_line_error(run_tool(["torchport", "run", "--target", "cpu", "old.py"], tmp_path),
                    "old.py is not valid Python at line 3: pre-3.7 syntax", "torchport migrate old.py -o OUT")
    (tmp_path / "py2.py").write_text('import torch\nprint "cuda"\n')
    _one_line_error(run_tool(["torchport", "run", "--target", "cpu", "py2.py"], tmp_path),
                    "py2.py is not valid Python at line 2: Python 2 syntax (a print statement)", "Python 3 first")
    (tmp_path / "oldmod.py").write_text("import torch\nclass Loader:\n    async = True\n")
    _one_line_error(run_tool(["torchport", "run", "--target", "cpu", "-m", "oldmod"], tmp_path),
                    "oldmod is not valid Python at line 3: pre-3.7 syntax")
