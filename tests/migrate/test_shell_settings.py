"""NCCL's settings and CUDA_VISIBLE_DEVICES in the shell scripts that launch training: renamed to
their twins on npu (HCCL's, ASCEND_RT_VISIBLE_DEVICES) with rows, noted where nothing reads them, the
script otherwise copied as it is."""

from __future__ import annotations

import csv
import os

import pytest

SCRIPT = """#!/bin/bash
# NCCL_DEBUG=INFO helps when a rank hangs
export NCCL_DEBUG=WARN
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
NCCL_SOCKET_IFNAME=eth0 torchrun --nproc_per_node 8 train.py  # one process per GPU
echo "interface: ${NCCL_SOCKET_IFNAME}"
"""


def rows(out, name="run.sh") -> list[tuple[str, str]]:
    """(line, "MODIFY" or the API noted) of every change and note about `name`."""
    found = []
    for report, kind in (("change_list.csv", "Operation Type"), ("notes.csv", "OP")):
        with (out / "torchport_report" / report).open(newline="") as handle:
            found += [(row["Start Line"], row[kind]) for row in csv.DictReader(handle) if row["File"] == name]
    return sorted(found)


@pytest.fixture
def tree(tmp_path):
    source = tmp_path / "repo"
    source.mkdir()
    (source / "run.sh").write_text(SCRIPT)
    (source / "run.sh").chmod(0o755)
    (source / "train.py").write_text("import torch\n")
    return source


def test_npu_renames_the_settings_hccl_has_and_notes_the_others(cli, tree, tmp_path):
    out = tmp_path / "out"
    assert cli("migrate", tree, "-o", out, "--target", "npu", "--quiet")[0] == 0
    assert (out / "run.sh").read_text() == SCRIPT.replace(
        "export TORCH_NCCL_ASYNC_ERROR_HANDLING", "export HCCL_ASYNC_ERROR_HANDLING").replace(
        "NCCL_SOCKET_IFNAME=eth0", "HCCL_SOCKET_IFNAME=eth0").replace("${NCCL_SOCKET_IFNAME}", "${HCCL_SOCKET_IFNAME}")
    assert os.access(out / "run.sh", os.X_OK)  # (its mode kept)
    # (the comment on line 2 is not a setting)
    assert rows(out) == [("3", "NCCL_DEBUG"), ("4", "MODIFY"), ("5", "MODIFY"), ("6", "MODIFY")]


def test_the_cpu_notes_every_setting_and_copies_the_script(cli, tree, tmp_path):
    out = tmp_path / "out"
    assert cli("migrate", tree, "-o", out, "--target", "cpu", "--quiet")[0] == 0
    assert (out / "run.sh").read_text() == SCRIPT
    assert rows(out) == [("3", "NCCL_DEBUG"), ("4", "TORCH_NCCL_ASYNC_ERROR_HANDLING"), ("5", "NCCL_SOCKET_IFNAME"),
                         ("6", "NCCL_SOCKET_IFNAME")]


@pytest.mark.parametrize("args", [("--target", "accelerator"), ("--target", "npu", "--ignore", "TP031")],
                         ids=["accelerator: NCCL on a GPU", "--ignore TP031"])
def test_the_script_is_left_alone(cli, tree, tmp_path, args):
    out = tmp_path / "out"
    assert cli("migrate", tree, "-o", out, *args, "--quiet")[0] == 0
    assert (out / "run.sh").read_text() == SCRIPT and rows(out) == []


def test_a_diff_shows_the_script(cli, tree, tmp_path):
    status, stdout, _ = cli("migrate", tree, "--target", "npu", "--diff")
    assert status == 0 and "+export HCCL_ASYNC_ERROR_HANDLING=1" in stdout
    assert (tree / "run.sh").read_text() == SCRIPT  # (the input is read-only)


DEVICES = """#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1  # two GPUs
torchrun --nproc_per_node 2 train.py --gpus "$CUDA_VISIBLE_DEVICES"
"""


@pytest.mark.parametrize(("target", "expected", "found"), [
    ("npu", DEVICES.replace("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"), [("2", "MODIFY"), ("3", "MODIFY")]),
    ("xpu", DEVICES.replace("CUDA_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"), [("2", "MODIFY"), ("3", "MODIFY")]),
    ("cpu", DEVICES, [("2", "CUDA_VISIBLE_DEVICES"), ("3", "CUDA_VISIBLE_DEVICES")]),
    ("accelerator", DEVICES, []),
], ids=["npu", "xpu", "cpu: noted", "accelerator: CUDA's own on a GPU"])
def test_the_visible_devices_are_the_targets_own(cli, tree, tmp_path, target, expected, found):
    (tree / "run.sh").write_text(DEVICES)
    out = tmp_path / "out"
    assert cli("migrate", tree, "-o", out, "--target", target, "--quiet")[0] == 0
    assert (out / "run.sh").read_text() == expected and rows(out) == found


def test_ignoring_tp008_leaves_the_visible_devices(cli, tree, tmp_path):
    (tree / "run.sh").write_text(DEVICES)
    out = tmp_path / "out"
    assert cli("migrate", tree, "-o", out, "--target", "npu", "--ignore", "TP008", "--quiet")[0] == 0
    assert (out / "run.sh").read_text() == DEVICES and rows(out) == []
