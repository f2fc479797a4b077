"""The torch calls a dump records besides the module calls, and the whole tensors `--tensors` keeps:
on a residual MLP of our own whose blocks call F.gelu on a hand-written path, one that the
environment can make lose precision (PRECISION_FAULT=gelu: aten::gelu through float16), and on
calls made in this process."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from _torchport_cli import TORCHPORT, Dumps, run

MLP = Path(__file__).parent / "projects" / "mlp.py"
KEPT = ("--tensors", "MLP.blocks.*.down", "--tensors", "MLP.head")


def _line(fragment: str) -> int:
    """The line of mlp.py that holds `fragment` (once)."""
    lines = [number for number, text in enumerate(MLP.read_text().splitlines(), 1) if fragment in text]
    assert len(lines) == 1, (fragment, lines)
    return lines[0]




def _dump(folder: Path, name: str, *options, **env) -> Path:
    result = run([*TORCHPORT, "dump", "-o", name, "--steps", "3", *options, MLP], folder, **env)
    assert result.returncode == 0, result.stderr
    return folder / name


# name -> (options, environment) of each dump the tests compare
RECIPES = {
    "clean": ((), {}),
    "again": ((), {}),
    "gelu": ((), {"PRECISION_FAULT": "gelu"}),
    "clean_kept": (KEPT, {}),
    "gelu_kept": (KEPT, {"PRECISION_FAULT": "gelu"}),
}


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mlp")
    return Dumps(lambda name: _dump(folder, name, *RECIPES[name][0], **RECIPES[name][1]))


def _compare(a: Path, b: Path, report: Path | None = None):
    return run([*TORCHPORT, "compare", a, b, *(["-o", report] if report else [])], a.parent)


def _rows(report: Path) -> list[dict]:
    with open(report / "compare.csv", newline="") as file:
        return list(csv.DictReader(file))


def _records(dump: Path) -> list[dict]:
    return json.loads((dump / "dump.json").read_text())["records"]


@pytest.mark.fidelity  # (one more dump, with a fault: make test keeps the clean pair)
def test_a_torch_function_that_loses_precision_is_named_first_not_the_module_around_it(dumps, tmp_path):
    result = _compare(dumps["clean"], dumps["gelu"], tmp_path / "report")
    assert result.returncode == 1, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert f"; first: step 1 forward torch.nn.functional.gelu in MLP.blocks.0 ({MLP}:{_line('F.gelu(h)')}): " \
           "relative error " in summary, summary
    rows = _rows(tmp_path / "report")
    first = next(row for row in rows if row["Verdict"] == "diverges")
    assert (first["Module"], first["API"], first["Phase"]) == ("MLP.blocks.0", "torch.nn.functional.gelu", "forward")
    # what came before it in the block is the same; the module around it is judged after it
    verdict = {(row["Step"], row["Phase"], row["Module"], row["API"], row["Call"]): row["Verdict"] for row in rows}
    assert verdict[("1", "forward", "MLP.embed", "", "0")] == verdict[("1", "forward", "MLP.blocks.0.up", "", "0")] == "same"
    order = [(row["Step"], row["Phase"], row["Module"], row["API"]) for row in rows]
    assert order.index(("1", "forward", "MLP.blocks.0", "torch.nn.functional.gelu")) \
        < order.index(("1", "forward", "MLP.blocks.0.down", "")) < order.index(("1", "forward", "MLP.blocks.0", ""))
    # float16 rounding: beyond float32's tolerance, well within float16's
    from torchport.precision.measures import tolerance

    assert tolerance("float32") < float(first["Rel Error"]) < tolerance("float16")


def test_two_clean_runs_of_the_mlp_compare_with_exit_0(dumps, tmp_path):
    result = _compare(dumps["clean"], dumps["again"], tmp_path / "report")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "torchport compare: no divergence (109 calls compared at float32)"
    assert {row["Verdict"] for row in _rows(tmp_path / "report")} == {"same"}


def test_the_calls_recorded_are_the_projects_own_that_compute(dumps):
    """Not the reshape, size, indexing, item() or the model's linspace (no new values), the
    torch.randint (integers), F.linear inside nn.Linear, nor the optimizer's calls; with their
    gradients in backward, each step."""
    source = f"{MLP}:"
    calls = {(record["step"], record["phase"], record["module"], record["api"], record["call"],
              record["source"].replace(source, "")) for record in _records(dumps["clean"]) if "api" in record}
    gelu, add, tanh, loss = (str(_line(text)) for text in ("F.gelu(h)", "x + self.down(h)", "torch.tanh(self", "F.cross_entropy(model"))
    expected = {(0, "forward", "", "torch.randn", 0, str(_line("torch.randn")))}
    for step in range(3):
        for phase in ("forward", "backward"):
            expected |= {(step, phase, "", "torch.nn.functional.cross_entropy", 0, loss),
                         (step, phase, "MLP", "torch.tanh", 0, tanh)}
            for block in ("MLP.blocks.0", "MLP.blocks.1"):
                expected |= {(step, phase, block, "torch.nn.functional.gelu", 0, gelu),
                             (step, phase, block, "torch.Tensor.mul", 0, gelu),
                             (step, phase, block, "torch.Tensor.add", 0, add)}
    assert calls == expected


@pytest.mark.fidelity  # (two more dumps, with --tensors)
def test_tensors_keeps_the_chosen_modules_whole_tensors_and_nothing_else(dumps):
    import torch

    assert not (dumps["clean"] / "tensors.pt").exists()
    tensors = torch.load(dumps["clean_kept"] / "tensors.pt", weights_only=True)
    records = _records(dumps["clean_kept"])
    chosen = {"MLP.blocks.0.down", "MLP.blocks.1.down", "MLP.head"}
    kept = [record for record in records if "tensor" in record]
    assert {record["module"] for record in kept} == chosen
    assert all("api" not in record for record in kept)
    assert [record for record in records if record["module"] in chosen and "api" not in record] == kept
    assert len(kept) == 3 * 3 * 2  # three modules, three steps, output and gradient
    assert sorted(record["tensor"] for record in kept) == list(range(len(tensors)))
    for record in kept:
        tensor = tensors[record["tensor"]]
        assert list(tensor.shape) == record["shape"] and str(tensor.dtype) == f"torch.{record['dtype']}"
        assert float(tensor.norm()) == pytest.approx(record["norm"], rel=1e-5)
    # the statistics and samples are those of a dump without --tensors
    plain = _records(dumps["clean"])
    assert [{k: v for k, v in r.items() if k != "tensor"} for r in records] == plain


@pytest.mark.fidelity  # (two more dumps, with --tensors)
def test_compare_measures_the_kept_tensors_over_every_element(dumps, tmp_path):
    import torch

    result = _compare(dumps["clean_kept"], dumps["gelu_kept"], tmp_path / "report")
    assert result.returncode == 1, result.stdout
    rows = {(row["Step"], row["Phase"], row["Module"], row["API"]): row for row in _rows(tmp_path / "report")}
    down = rows[("1", "forward", "MLP.blocks.0.down", "")]
    assert down["Elements"] == str(32 * 32)  # the whole output, not the 512-element sample
    assert rows[("1", "forward", "MLP.blocks.0", "torch.nn.functional.gelu")]["Elements"] == "512"
    a, b = (torch.load(dumps[name] / "tensors.pt", weights_only=True) for name in ("clean_kept", "gelu_kept"))
    index = next(r["tensor"] for r in _records(dumps["clean_kept"])
                 if (r["step"], r["phase"], r["module"]) == (0, "forward", "MLP.blocks.0.down") and "api" not in r)
    whole = float((a[index].double() - b[index].double()).norm() / a[index].double().norm())
    assert float(down["Rel Error"]) == pytest.approx(whole, rel=1e-3)
    # against a dump that kept only samples, the kept side is sampled as dump samples
    result = _compare(dumps["clean_kept"], dumps["again"], tmp_path / "mixed")
    assert result.returncode == 0, result.stdout
    mixed = {(row["Step"], row["Phase"], row["Module"], row["API"]): row for row in _rows(tmp_path / "mixed")}
    assert mixed[("1", "forward", "MLP.blocks.0.down", "")]["Elements"] == "512"
    assert {row["Verdict"] for row in mixed.values()} == {"same"}


def test_dump_help_explains_tensors():
    result = run([*TORCHPORT, "dump", "--help"], Path(__file__).parent)
    text = " ".join(result.stdout.split())
    assert "--tensors GLOB" in text and "fnmatch" in text and "every element" in text and "tensors.pt" in text


@pytest.mark.fidelity  # (one more dump, of module calls only)
def test_module_calls_are_judged_as_before_and_a_dump_of_module_calls_only_still_compares(dumps, tmp_path):
    """A schema 1 dump (module calls only) made of each side: the same rows, measures and verdicts
    as the module calls' rows of the whole comparison; its first divergence is then the module."""
    stripped = {}
    for name in ("clean", "gelu"):
        folder = stripped[name] = tmp_path / name
        shutil.copytree(dumps[name], folder)
        body = json.loads((folder / "dump.json").read_text())
        body["schema"] = "torchport-dump/1"
        body["records"] = [record for record in body["records"] if "api" not in record]
        (folder / "dump.json").write_text(json.dumps(body))
    whole = _compare(dumps["clean"], dumps["gelu"], tmp_path / "whole")
    modules = _compare(stripped["clean"], stripped["gelu"], tmp_path / "modules")
    assert whole.returncode == modules.returncode == 1
    assert [row for row in _rows(tmp_path / "whole") if not row["API"]] == _rows(tmp_path / "modules")
    assert "; first: step 1 forward MLP.blocks.0.down (" in modules.stdout.strip().splitlines()[-1]


def test_the_recorder_keeps_this_projects_calls_that_compute_and_their_gradients(tmp_path):
    """In this process: a module's own F.linear, views and copies, a cast that changes nothing and a
    library's call are left out; a rounding cast, a matmul, a product and a sum are kept, with the
    gradients that reach them, and the loss is counted once."""
    import torch
    import torch.nn as nn

    from torchport.precision.recorder import DumpRecorder

    (tmp_path / "library_of_elsewhere.py").write_text("import torch\n\ndef squash(x):\n    return torch.sigmoid(x)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import library_of_elsewhere
    finally:
        sys.path.remove(str(tmp_path))
    layer = nn.Linear(8, 8)
    x = torch.randn(4, 8)
    with DumpRecorder(project=str(Path(__file__).parent)) as recorder:
        y = layer(x)
        y.view(2, 16).t().contiguous().clone().detach()
        y.float()
        y.half()
        library_of_elsewhere.squash(y)
        (torch.mm(y, layer.weight) * 2).sum().backward()
    calls = [(record["phase"], record["api"]) for record in recorder.records if "api" in record]
    assert calls == [("forward", "torch.Tensor.half"), ("forward", "torch.mm"), ("forward", "torch.Tensor.mul"),
                     ("forward", "torch.Tensor.sum"), ("backward", "torch.Tensor.sum"), ("backward", "torch.Tensor.mul"),
                     ("backward", "torch.mm")]
    sources = {record["source"].rsplit(":", 1)[0] for record in recorder.records if "api" in record}
    assert {Path(source).resolve() for source in sources} == {Path(__file__).resolve()}
    assert [record["module"] for record in recorder.records if "api" not in record] == ["Linear", "Linear"]
    assert len(recorder.steps[0]["loss"]) == 1
