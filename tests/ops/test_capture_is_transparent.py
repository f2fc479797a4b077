"""A script runs the same under `ops capture`, `shapes`, `dump` and the detector as it does plainly: the
corpus of tricky calls (transparency_corpus.py) gives the same results, or raises the same errors."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(__file__))
import transparency_corpus as corpus  # noqa: E402

SEEN: dict[str, dict] = {}  # what the corpus gave inside a script that a command ran, by command

# The script each command runs: a training loop (for `shapes` to find) whose step runs the corpus.
SCRIPT = textwrap.dedent(
    """
    import torch
    import transparency_corpus as corpus
    import test_capture_is_transparent as test

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1):
        test.SEEN[KIND] = corpus.outcomes(corpus.IN_A_SCRIPT)
        loss = (model(torch.ones(2, 3)) % 1.).sum()
        loss.backward()
        optimizer.step()
    """
)


@pytest.fixture(scope="module")
def plain():
    return corpus.outcomes()


def test_the_corpus_runs_the_same_under_the_op_recorder(plain):
    from torchport.ops.recorder import OpRecorder

    with OpRecorder() as recorder:
        captured = corpus.outcomes()
    assert corpus.differences(plain, captured) == []
    names = {call.name for call in recorder.calls}
    assert {"aten::remainder", "aten::pow", "aten::where", "aten::index_put_"} <= names


def test_the_corpus_runs_the_same_under_the_dump_recorder(plain):
    from torchport.precision.recorder import DumpRecorder

    with DumpRecorder() as recorder:
        captured = corpus.outcomes()
        torch.nn.Linear(3, 2)(torch.ones(1, 3)).sum().backward()
    assert corpus.differences(plain, captured) == []
    modules = [record for record in recorder.records if "api" not in record]  # (not the corpus's torch calls)
    assert [(r["phase"], r["module"].split("#")[0]) for r in modules[-2:]] == [("forward", "Linear"), ("backward", "Linear")]


def test_the_corpus_runs_the_same_in_a_step_of_the_detector(plain):
    from torchport.shapes.detector import ShapeDetector

    detector = ShapeDetector(save_at_exit=False)
    for _ in detector.start([0]):
        captured = corpus.outcomes()
    assert corpus.differences(plain, captured) == []
    assert detector.steps == 1 and len(detector.sites) > len(corpus.CASES)


@pytest.mark.parametrize("command", [("ops", "capture", "-o", "{out}/ops.json"), ("shapes", "-o", "{out}"),
                                     ("dump", "-o", "{out}")], ids=["ops capture", "shapes", "dump"])
def test_the_commands_run_a_script_of_the_corpus_unchanged(cli, tmp_path, plain, command):
    kind = command[0]
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.replace("KIND", repr(kind)))
    SEEN.pop(kind, None)
    status, _, err = cli(*(part.format(out=tmp_path / "out") for part in command), script)
    assert status == 0, err
    assert corpus.differences({name: plain[name] for name in corpus.IN_A_SCRIPT}, SEEN[kind]) == []


def test_a_difference_is_named_with_its_case():
    base = {"sum": torch.ones(2), "raises": corpus.Raised("RuntimeError", "no"), "nan": torch.tensor([float("nan")])}
    changed = {"sum": torch.ones(2, dtype=torch.float64), "raises": torch.ones(1), "nan": torch.tensor([float("nan")])}
    found = corpus.differences(base, changed)
    assert [line.split(":")[0] for line in found] == ["sum", "raises"]
    assert corpus.differences(base, dict(base)) == []


@pytest.mark.fidelity
def test_a_dispatch_subclass_runs_the_same_under_the_op_recorder():
    from torchport.ops.recorder import OpRecorder

    plain = corpus.outcomes(corpus.COSTLY_CASES)
    with OpRecorder():
        captured = corpus.outcomes(corpus.COSTLY_CASES)
    assert corpus.differences(plain, captured) == []
