"""`torchport analyze`: each mode writes exactly its reports, with exactly the expected rows, every
row tied to the line it is about; `migrate` writes the advice too, and `--apply-affinity` swaps
optimizers for fused ones without changing what the script computes."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PROJECT = HERE / "fixture" / "project"
EXPECTED = HERE / "fixture" / "expected"
REPORT = "torchport_report"
APIS = {"unsupported_api.csv", "unknown_api.csv", "api_precision_advice.csv", "api_performance_advice.csv"}
AFFINITY = {"affinity_api_call.csv"}


def rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize("target", ["npu", "mps", "cpu"])
@pytest.mark.parametrize("mode", ["apis", "affinity"])
def test_each_mode_writes_exactly_its_reports_with_the_expected_rows(cli, tmp_path: Path, target: str, mode: str) -> None:
    code, out, err = cli("analyze", PROJECT, "-o", tmp_path / "out", "-t", target, "-m", mode)
    assert code == 0, err
    reports = tmp_path / "out" / REPORT
    written = {p.name for p in reports.iterdir()} - {"summary.json", "skipped_files.csv"}
    assert ("index.html" in written) == (mode == "apis")  # (the page: tests/report/)
    written.discard("index.html")
    assert written == (APIS if mode == "apis" else AFFINITY)
    assert not (tmp_path / "out" / "train.py").exists()  # nothing rewritten
    for name in written:
        got = rows(reports / name)
        assert got == rows(EXPECTED / target / name), name
        for row in got[1:]:
            assert row[0] in {"train.py", "model.py"} and int(row[1]) >= 1 and int(row[2]) >= int(row[1]), row
    assert f"torchport analyze [{target}, {mode}]" in out


def test_the_expected_rows_say_what_each_target_needs() -> None:
    """The golden files themselves, read as a person would: the advice differs by target."""
    npu = {row[3] for row in rows(EXPECTED / "npu" / "api_performance_advice.csv")[1:]}
    cpu = {row[3] for row in rows(EXPECTED / "cpu" / "api_performance_advice.csv")[1:]}
    assert {"--amp", "TASK_QUEUE_ENABLE", "torch.multiprocessing.spawn", ".to()"} <= npu
    assert not {"--amp", "TASK_QUEUE_ENABLE", "torch.multiprocessing.spawn", ".to()"} & cpu
    assert [row[3] for row in rows(EXPECTED / "mps" / "api_precision_advice.csv")[1:]] == ["torch.float64"]
    npu_affinity = {row[5] for row in rows(EXPECTED / "npu" / "affinity_api_call.csv")[1:]}
    assert {"torch_npu.npu_fusion_attention", "torch_npu.npu_rms_norm", "torch_npu.npu_rotary_mul",
            "torch_npu.npu_swiglu", "torch_npu.optim.NpuFusedAdamW"} <= npu_affinity
    assert not any(name.startswith("torchport") for name in npu_affinity)  # (the port needs no torchport)
    cpu_affinity = {row[5] for row in rows(EXPECTED / "cpu" / "affinity_api_call.csv")[1:]}
    assert {"torch.nn.functional.scaled_dot_product_attention", "torchport.optim.FusedAdamW"} <= cpu_affinity
    assert not any(name.startswith("torch_npu") for name in cpu_affinity)


def test_npu_fused_ops_named_by_affinity_exist_in_the_committed_kernel_data() -> None:
    import json

    from torchport.targets.advice import NPU

    data_dir = Path(__file__).resolve().parents[2] / "src" / "torchport" / "targets" / "data"
    kernels = json.dumps(json.loads(next(data_dir.glob("kernels-torch_npu-*.json")).read_text()))
    for row in NPU.affinity:
        if row.replacement.startswith("torch_npu.npu_"):
            assert f'"{row.replacement.removeprefix("torch_npu.")}' in kernels or f"::{row.replacement.removeprefix('torch_npu.')}" in kernels, row


def test_migrate_writes_the_advice_too(cli, tmp_path: Path) -> None:
    code, _, err = cli("migrate", PROJECT, "-o", tmp_path / "out", "-t", "npu")
    assert code == 0, err
    reports = tmp_path / "out" / REPORT
    for name in APIS | AFFINITY:
        assert rows(reports / name) == rows(EXPECTED / "npu" / name), name


def test_third_party_finds_the_cuda_a_library_hard_codes(cli, tmp_path: Path, monkeypatch) -> None:
    library = tmp_path / "site" / "fastlib"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("import torch\n\ndef warm():\n    return torch.zeros(1).cuda()\n")
    (library / "kernel.cu").write_text("__global__ void k() {}\n")
    script = tmp_path / "project" / "train.py"
    script.parent.mkdir()
    script.write_text("import fastlib\nimport torch\nfastlib.warm()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    code, out, err = cli("analyze", script.parent, "-o", tmp_path / "out", "-m", "third-party")
    assert code == 0, err
    found = rows(tmp_path / "out" / REPORT / "full_unsupported_results.csv")
    assert found[0] == ["File", "3rd-party API", "Message"]
    assert {(row[0], row[1]) for row in found[1:]} == {("fastlib/__init__.py", ".cuda()"), ("fastlib/kernel.cu", ".cu")}
    code, _, err = cli("analyze", script.parent, "-o", tmp_path / "out2", "-m", "third-party", "--package", "nosuchlib")
    assert code == 2 and err.count("\n") == 1 and "no installed package named nosuchlib" in err


def test_bad_input_is_one_line(cli, tmp_path: Path) -> None:
    code, _, err = cli("analyze", tmp_path / "missing", "-o", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "no such file or directory" in err


TRAIN = '''\
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
x, y = torch.randn(64, 8).cuda(), torch.randn(64, 1).cuda()
for step in range(30):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
torch.save(optimizer.state_dict(), "state.pt")
print(f"{loss.item():.8f}")
'''


@pytest.mark.fidelity  # two migrations and two trainings in subprocesses: make fidelity
def test_apply_affinity_trains_to_the_same_loss(cli, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(TRAIN)
    runs = {}
    for label, extra in (("plain", []), ("fused", ["--apply-affinity"])):
        out = tmp_path / label
        code, _, err = cli("migrate", src, "-o", out, "-t", "cpu", *extra)
        assert code == 0, err
        done = subprocess.run([sys.executable, "train.py"], cwd=out, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        runs[label] = (out, float(done.stdout.split()[-1]))
    fused_source = (runs["fused"][0] / "train.py").read_text()
    assert "torchport.optim.FusedAdamW(model.parameters(), lr=1e-2, weight_decay=0.01)" in fused_source
    assert "torch.optim.AdamW" not in (runs["fused"][0] / "train.py").read_text()
    assert "torch.optim.AdamW" in (runs["plain"][0] / "train.py").read_text()
    assert runs["fused"][1] == pytest.approx(runs["plain"][1], rel=1e-5, abs=1e-7)
    changes = rows(runs["fused"][0] / REPORT / "change_list.csv")
    assert any("--apply-affinity" in row[4] for row in changes[1:])
    import torch

    plain = torch.load(runs["plain"][0] / "state.pt")
    fused = torch.load(runs["fused"][0] / "state.pt")
    assert plain["state"].keys() == fused["state"].keys()
    for key in plain["state"]:
        torch.testing.assert_close(fused["state"][key]["exp_avg"], plain["state"][key]["exp_avg"], rtol=1e-5, atol=1e-7)


VARYING = '''\
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.randn(n, 4) for n in (2, 3, 4)]
for batch in batches:
    optimizer.zero_grad()
    model(batch).sum().backward()
    optimizer.step()
'''


def test_dynamic_shape_mode_writes_a_copy_that_reports_when_run(cli, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(VARYING)
    (src / "notes.txt").write_text("kept")
    (src / "NOTES.md").symlink_to("notes.txt")  # (YOLOv5's CLAUDE.md -> AGENTS.md: was left out of the copy)
    out = tmp_path / "out"
    code, stdout, err = cli("analyze", src, "-o", out, "-m", "dynamic-shape")
    assert code == 0, err
    assert "1 files with a training loop instrumented" in stdout
    assert "DETECTOR.start(batches)" in (out / "train.py").read_text()
    assert (out / "notes.txt").read_text() == "kept"
    assert (out / "NOTES.md").is_symlink() and (out / "NOTES.md").read_text() == "kept"
    done = subprocess.run([sys.executable, "train.py"], cwd=out, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = rows(out / "dynamic_shape_report.csv")
    assert any("linear" in row[0].lower() for row in report[1:]), report


def test_dynamic_shape_mode_says_why_a_file_that_trains_was_copied_as_it_is(cli, tmp_path: Path) -> None:
    """A file that trains with no loop to wrap (a while loop), and one that does not parse, are
    named with the reason; a file that trains nothing is copied without a word."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "steps.py").write_text("import torch\nwhile True:\n    loss.backward()\n    optimizer.step()\n")
    (src / "broken.py").write_text("def f(:\n")
    (src / "model.py").write_text("import torch\nnet = torch.nn.Linear(2, 2)\n")
    code, stdout, err = cli("analyze", src, "-o", tmp_path / "out", "-m", "dynamic-shape")
    assert code == 0, err
    assert "0 files with a training loop instrumented" in stdout
    assert "steps.py: copied as it is, it calls .backward() and an optimizer's .step(), but in no for loop" in stdout
    assert "broken.py: copied as it is, it does not parse (line 1" in stdout
    assert "model.py" not in stdout
