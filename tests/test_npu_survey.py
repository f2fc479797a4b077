"""tools/npu_survey.py reads a migrate output folder: what still names the NPU, matched against
unsupported_api.csv, and the skipped files told apart from the crashes. A fake output folder
stands for migrate's (no process is started here)."""

import csv
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "npu_survey.py"


@pytest.fixture(scope="module")
def survey():
    spec = importlib.util.spec_from_file_location("npu_survey", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up by name)
    spec.loader.exec_module(module)
    return module


def write_out(root: Path, files: dict[str, str], unsupported=(), skipped=(), notes=()) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    report = root / "torchport_report"
    report.mkdir(parents=True, exist_ok=True)
    for name, header, rows in (
        ("unsupported_api.csv", ["File", "Start Line", "End Line", "OP", "Tips"], unsupported),
        ("skipped_files.csv", ["File", "Reason"], skipped),
        ("notes.csv", ["File", "Start Line", "End Line", "OP", "Tips"], notes),
    ):
        with open(report / name, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
    return root


TRAIN = """\
    import torch
    import torch_npu as tnpu
    from torch_npu.contrib import transfer_to_npu
    from torch_npu import npu_rms_norm

    def step(model, x, w):
        torch.npu.set_device(0)
        x = x.npu()
        y = tnpu.npu_fusion_attention(x, x, x, 1, "BSND")[0]
        z = npu_rms_norm(y, w)[0]
        torch.npu.current_stream().synchronize()
        h = torch.npu_one_hot(z, -1, 10, 1, 0)
        return model.to("cpu"), h.cuda()
    """


def test_every_kind_of_leftover_is_found_once_at_its_line(survey):
    found = survey.leftovers(textwrap.dedent(TRAIN), "train.py", survey.npu_names())
    assert [(f.line, f.kind, f.api) for f in found] == [
        (2, "import", "import torch_npu"),
        (3, "import", "from torch_npu.contrib import transfer_to_npu"),
        (4, "import", "from torch_npu import npu_rms_norm"),
        (7, "reference", "torch.npu.set_device"),
        (8, "call", "Tensor.npu"),
        (9, "reference", "torch_npu.npu_fusion_attention"),
        (10, "imported-name", "torch_npu.npu_rms_norm"),
        (11, "reference", "torch.npu.current_stream"),
        (12, "old-kernel", "torch.npu_one_hot"),
    ]
    assert found[4].text == "x = x.npu()"


def test_cuda_code_and_look_alike_names_are_not_leftovers(survey):
    text = """\
        import torch
        npu = object()
        def f(x, args):
            torch.cuda.set_device(0)
            x = x.to(args.npu)  # an attribute named npu, not a call of it
            device = "npu:0"     # strings are the rules' business, not this survey's
            return x.cuda(), npu
        """
    assert survey.leftovers(textwrap.dedent(text), "a.py", survey.npu_names()) == []


def test_leftovers_are_matched_against_the_report_by_file_and_name(survey, tmp_path):
    out = write_out(
        tmp_path,
        {"pkg/train.py": TRAIN, "plain.py": "import torch\nprint(torch.ones(1))\n"},
        unsupported=[
            ["pkg/train.py", 9, 9, "torch_npu.npu_fusion_attention", "no CPU kernel: port by hand"],
            ["pkg/train.py", 12, 12, "torch.npu_one_hot", "torch_npu 1.x"],
            ["pkg/train.py", 50, 50, "torch_npu.npu_rms_norm", "the row's line moved: the name still matches"],
        ],
        notes=[["pkg/train.py", 7, 7, "torch.npu.set_device", "told of, but not as unsupported"]],
    )
    summary = survey.measure(out)
    assert summary["python_files"] == 2
    assert summary["leftovers"] == 9
    assert summary["listed_leftovers_per_api"] == {
        "torch.npu_one_hot": 1, "torch_npu.npu_fusion_attention": 1, "torch_npu.npu_rms_norm": 2,
    }  # (npu_rms_norm: its import and its call)
    assert [(u["line"], u["api"]) for u in summary["unlisted"]] == [
        (2, "import torch_npu"), (3, "from torch_npu.contrib import transfer_to_npu"),
        (7, "torch.npu.set_device"), (8, "Tensor.npu"), (11, "torch.npu.current_stream"),
    ]
    assert [u["elsewhere"] for u in summary["unlisted"]] == [[], [], ["notes.csv"], [], []]
    assert summary["report_rows_per_api"]["torch_npu.npu_rms_norm"] == 1


def test_skipped_sources_are_not_crashes_and_internal_errors_are(survey, tmp_path):
    out = write_out(
        tmp_path,
        {"py2.py": "print 'hello'\n", "broke.py": "import torch\n", "ok.py": "import torch\n"},
        skipped=[
            ["py2.py", "Missing parentheses in call to 'print' (line 1)"],
            ["broke.py", "internal error (KeyError: 'x')"],
        ],
        notes=[["ok.py", 1, 1, "torch_npu", "not converted from the NPU: internal error (ValueError: y)"]],
    )
    summary = survey.measure(out)
    assert [s["file"] for s in summary["skipped"]] == ["py2.py"]
    assert sorted(c["file"] for c in summary["crashes"]) == ["broke.py", "ok.py"]
    assert summary["output_not_python"] == []  # py2.py is OUT's copy of a source that is not Python 3


def test_an_output_that_is_not_python_is_reported(survey, tmp_path):
    out = write_out(tmp_path, {"bad.py": "def f(:\n"})
    assert [b["file"] for b in survey.measure(out)["output_not_python"]] == ["bad.py"]


@pytest.mark.parametrize("make", [lambda p: p / "missing", lambda p: p])
def test_bad_input_is_one_line_and_status_2(survey, tmp_path, capsys, make):
    assert survey.main([str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("npu_survey: ")


def test_other_npu_traces_are_told_apart_from_the_count(survey, tmp_path):
    out = write_out(tmp_path / "out", {"a.py": """\
        import torch
        loc = 'npu:{}'.format(0)
        device = "npu" if True else "cpu"
        with torch.autograd.profiler.profile(use_npu=True) as prof:
            x = torch.ones(1).to("npu:0")
        menu = "npus"
        kwargs = {'use_npu': True}
        half = x.type() == 'torch.npu.HalfTensor'
        """})
    summary = survey.measure(out)
    assert summary["leftovers"] == 0 and summary["unlisted"] == []
    found = [(i["line"], i["kind"], i["api"]) for i in summary["other_npu_isms"]]
    assert found == [(2, "npu-device-string", "'npu:{}'"), (3, "npu-device-string", "'npu'"), (4, "npu-keyword", "use_npu="),
                     (5, "npu-device-string", "'npu:0'"), (7, "npu-keyword", "use_npu="),
                     (8, "npu-type-string", "'torch.npu.HalfTensor'")]
