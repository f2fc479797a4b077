"""run_distributed.sh per target (run with a stand-in for Python that prints what it is asked
to run), and the command line it takes from the project's shell scripts and markdown."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from torchport import targets
from torchport.distribute.command_line import CommandLine, find
from torchport.distribute.launcher import launcher, launcher_name

# A stand-in for python: `-c` prints what it is given as a device count; `-m torch.distributed.run`
# prints its arguments, then runs the command torchrun would give rank LOCAL_RANK (for --no-python).
STAND_IN = r'''#!/usr/bin/env bash
if [ "$1" = -c ]; then echo "${FAKE_DEVICES:-8}"; echo "probe: $2" >> "$LOG"; exit; fi
if [ "$1" = -m ]; then
    echo "torchrun: ${*:3}" >> "$LOG"
    shift 2
    while [ $# -gt 0 ] && [ "$1" != --no-python ] && [[ "$1" == --* ]]; do shift 2; done
    if [ "$1" = --no-python ]; then shift; LOCAL_RANK=1 "$@"; fi
    exit
fi
echo "python: $*" >> "$LOG"
'''


@pytest.fixture
def launch(tmp_path):
    """launch(target, env) -> the lines the stand-in logged, running a launcher for train.py."""
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    bin_ = tmp_path / "bin"  # (taskset that says what it would bind)
    bin_.mkdir()
    (bin_ / "taskset").write_text('#!/usr/bin/env bash\necho "taskset: $1 $2" >> "$LOG"; shift 2; exec "$@"\n')
    (bin_ / "taskset").chmod(0o755)
    (bin_ / "nproc").write_text("#!/usr/bin/env bash\necho 16\n")
    (bin_ / "nproc").chmod(0o755)

    def run(target: str, found: CommandLine | None = None, **env) -> list[str]:
        made = launcher("train.py", targets.get(target), "run_distributed.sh", found)
        script = tmp_path / "run_distributed.sh"
        script.write_text(made.text)
        log = tmp_path / "log"
        log.unlink(missing_ok=True)
        environment = {"PATH": f"{bin_}:{os.environ['PATH']}", "PYTHON": str(python), "LOG": str(log), **env}
        done = subprocess.run(["bash", str(script), "--extra", "1"], env=environment, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return log.read_text().splitlines()

    return run


def test_cpu_starts_two_processes_unless_told(launch):
    logged = launch("cpu")
    assert logged == ["torchrun: --nnodes 1 --node_rank 0 --master_addr 127.0.0.1 --master_port 29500 "
                      "--nproc_per_node 2 train.py --extra 1"]
    assert "--nproc_per_node 3" in launch("cpu", NPROC_PER_NODE="3")[0]


def test_npu_counts_its_devices_and_binds_each_rank_to_its_cores(launch):
    logged = launch("npu", FAKE_DEVICES="4")
    assert logged[0] == "probe: import torch, torch_npu; print(torch.npu.device_count())"
    assert "--nproc_per_node 4 --no-python bash -c" in logged[1]
    assert logged[2] == "taskset: -c 4-7"  # rank 1 of 4 on 16 cores
    assert logged[3] == "python: train.py --extra 1"


def test_npu_binding_can_be_turned_off(launch):
    logged = launch("npu", FAKE_DEVICES="4", BIND_CORES="0")
    assert logged[1].endswith("--nproc_per_node 4 train.py --extra 1") and len(logged) == 2


def test_machines_from_the_variables(launch):
    logged = launch("cpu", NNODES="2", NODE_RANK="1", MASTER_ADDR="10.0.0.1", MASTER_PORT="1234")
    assert "--nnodes 2 --node_rank 1 --master_addr 10.0.0.1 --master_port 1234" in logged[0]


def test_no_devices_is_one_line(launch, tmp_path):
    made = launcher("train.py", targets.get("npu"), "run_distributed.sh", None)
    (tmp_path / "l.sh").write_text(made.text)
    (tmp_path / "python").write_text(STAND_IN)
    (tmp_path / "python").chmod(0o755)
    done = subprocess.run(["bash", str(tmp_path / "l.sh")], capture_output=True, text=True, timeout=30,
                          env={"PATH": os.environ["PATH"], "PYTHON": str(tmp_path / "python"), "FAKE_DEVICES": "0",
                               "LOG": str(tmp_path / "log")})
    assert done.returncode == 1
    assert done.stderr.strip().endswith("no devices to start processes on (NPROC_PER_NODE=0): set NPROC_PER_NODE")


@pytest.mark.parametrize("target", targets.names())
def test_each_target_says_its_variables(target):
    chosen = targets.get(target)
    text = launcher("train.py", chosen, "run_distributed.sh", None).text
    for variable in ("NPROC_PER_NODE", "NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT"):
        assert f"#   {variable} " in text
    if chosen.visible_devices_env:
        assert f'export {chosen.visible_devices_env}; fi' in text
    for setting in chosen.launch.settings:
        assert f'export {setting.name}="${{{setting.name}:-{setting.default}}}"' in text
    assert ("taskset" in text) == chosen.launch.bind_cores
    assert "No command line for train.py was found" in text
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_npu_exports_its_settings():
    text = launcher("train.py", targets.get("npu"), "run_distributed.sh", None).text
    assert 'export TASK_QUEUE_ENABLE="${TASK_QUEUE_ENABLE:-1}"' in text
    assert 'if [ -n "${ASCEND_RT_VISIBLE_DEVICES:-}" ]; then export ASCEND_RT_VISIBLE_DEVICES; fi' in text


def test_launcher_names():
    assert launcher_name("train.py", False) == "run_distributed.sh"
    assert launcher_name("tools/train.py", True) == "tools/run_distributed_train.sh"


# -- the command line --

def test_readme_code_block():
    readme = "Train with python train.py --no\n\n\n\n```bash\n$ python3 train.py data/ --epochs 90 > log 2>&1\n```\n"
    assert find("train.py", {"README.md": readme}) == CommandLine("README.md:6", "", "train.py", "data/ --epochs 90")


def test_indented_code_lines():
    readme = "Train:\n\n    CUDA_VISIBLE_DEVICES=0 python train.py --lr 0.1 \\\n        --epochs 3\n\n    the python train.py script\n"
    assert find("train.py", {"README.rst": readme}) == CommandLine("README.rst:3", "", "train.py", "--lr 0.1 --epochs 3")
    assert find("train.py", {"README.md": "    see python train.py --x\n"}) is None


def test_prose_outside_code_blocks_is_not_a_command():
    assert find("train.py", {"README.md": "run python train.py --lr 1 to train\n"}) is None


def test_shell_script_before_markdown_and_continued_lines():
    texts = {
        "README.md": "```\npython train.py --from-readme\n```\n",
        "scripts/run.sh": "#!/bin/sh\ncd ..\nnohup python -u ../train.py \\\n    --data \"$DATA\" --lr 0.1 &\n",
    }
    found = find("train.py", texts)
    assert found == CommandLine("scripts/run.sh:3", "scripts", "../train.py", '--data "$DATA" --lr 0.1')


def test_launch_lines_keep_the_script_arguments_only():
    texts = {"run.sh": "python -m torch.distributed.launch --nproc_per_node=8 train.py --amp; echo done\n",
             "other.sh": "torchrun --nproc_per_node 4 other.py --x\n"}
    assert find("train.py", texts) == CommandLine("run.sh:1", "", "train.py", "--amp")


def test_path_from_the_top():
    found = find("tools/train.py", {"README.md": "```\nCUDA_VISIBLE_DEVICES=0 python tools/train.py cfg.py\n```\n"})
    assert found == CommandLine("README.md:2", "", "tools/train.py", "cfg.py")


def test_same_name_elsewhere_runs_from_the_scripts_folder():
    # another train.py is named: its arguments are a guess, from the script's own folder
    found = find("examples/mnist/train.py", {"README.md": "```\npython train.py --epochs 1\n```\n"})
    assert found == CommandLine("README.md:2", "examples/mnist", "train.py", "--epochs 1")
    exact = {"README.md": "```\npython train.py --epochs 1\n```\n",
             "examples/mnist/README.md": "```\npython train.py --epochs 14\n```\n"}
    assert find("examples/mnist/train.py", exact).arguments == "--epochs 14"


def test_not_python_running_it():
    assert find("train.py", {"a.sh": "cat train.py\nvim train.py --x\n"}) is None


def test_placeholders_are_found_and_the_launcher_waits_for_them(launch):
    readme = {"README.md": "```\ncd cfd && python train.py --agent <name> --data /path/to/set [more options]\n```\n"}
    found = find("cfd/train.py", readme)
    assert found.folder == "cfd" and found.script == "train.py"
    assert found.placeholders == ("<name>", "/path/to/set", "[more options]")  # (a bracketed placeholder is one word)
    made = launcher("cfd/train.py", targets.get("cpu"), "cfd/run_distributed.sh", found)
    assert subprocess.run(["bash", "-n"], input=made.text, text=True).returncode == 0
    refused = subprocess.run(["bash"], input=made.text, text=True, capture_output=True, timeout=30)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("fill in the command line first (from README.md:2): <name> /path/to/set [more options]")


def test_a_redirection_is_not_a_placeholder():
    found = find("train.py", {"run.sh": "python train.py --lr 1 <input.txt\npython other.py\n"})
    assert found.arguments == "--lr 1" and found.placeholders == ()


# An ImageNet-example-style README: a single-process line first, then the line of its own
# multi-process mode, whose mp.spawn the launcher's processes replace.
IMAGENET_README = (
    "```bash\npython main.py -a resnet18 [imagenet-folder with train and val folders]\n```\n\n"
    "```bash\npython main.py -a resnet50 --dist-url 'tcp://127.0.0.1:FREEPORT' --dist-backend 'nccl' "
    "--multiprocessing-distributed --world-size 1 --rank 0 [imagenet-folder with train and val folders]\n```\n")


def test_the_line_asking_for_the_scripts_own_distributed_mode_is_taken():
    found = find("main.py", {"README.md": IMAGENET_README})
    assert found.where == "README.md:6"
    assert "--multiprocessing-distributed --world-size 1 --rank 0" in found.arguments
    assert found.placeholders == ("[imagenet-folder with train and val folders]",)


@pytest.mark.parametrize(("target", "backend"), [("cpu", "gloo"), ("npu", "hccl"), ("cuda", "'nccl'")])
def test_the_command_lines_backend_is_the_targets(target, backend):
    made = launcher("main.py", targets.get(target), "run_distributed.sh", find("main.py", {"README.md": IMAGENET_README}))
    assert f"--dist-backend {backend} --multiprocessing-distributed" in made.text
    assert "[imagenet-folder with train and val folders]" in made.text.splitlines()[-1]


def test_a_backend_chosen_at_run_time_leaves_the_word_as_written():
    made = launcher("main.py", targets.get("accelerator"), "run_distributed.sh", find("main.py", {"README.md": IMAGENET_README}))
    assert "--dist-backend 'nccl'" in made.text
