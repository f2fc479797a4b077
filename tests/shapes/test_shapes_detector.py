"""DETECTOR: which call sites are dynamic, where they are, what a step is, and what is left out."""

from __future__ import annotations

import csv
import itertools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.shapes import ShapeDetector
from torchport.shapes.report import ASCEND_COLUMNS, rows
from torchport.shapes.sites import BATCH

HERE = os.path.relpath(__file__)


def _detector(**settings) -> ShapeDetector:
    return ShapeDetector(save_at_exit=False, **settings)


def _dynamic(detector) -> dict[str, list]:
    """Function name -> its report row, for the dynamic sites."""
    return {row[0]: row for row in rows(detector.sites)}


def _line_below() -> int:
    return sys._getframe(1).f_lineno + 1


def test_ascends_own_example_flags_only_nonzero():
    """msFmkTransplt's test: randn(4, 3), mean and nonzero(t > mean) over 5 steps."""
    data = []
    for count in range(1, 6):
        t = torch.zeros(4, 3)
        t.view(-1)[:count] = 10.0
        data.append(t)
    detector = _detector()
    for t in detector.start(data):
        mean = t.mean()
        torch.nonzero(t > mean)
    found = _dynamic(detector)
    assert list(found) == ["torch.nonzero"]
    assert found["torch.nonzero"][4:6] == ["[(4, 3)-(4, 3)]", "[(1, 2)-(5, 2)]"]
    assert found["torch.nonzero"][7:10] == [5, 5, "yes"]  # distinct shapes, steps, dynamic


def test_the_report_names_the_users_line_never_torchs():
    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            line["fc"] = _line_below()
            return self.fc(x)

    line, model = {}, Tiny()
    detector = _detector()
    for n in detector.start([1, 2, 3]):
        x = torch.ones(n, 3)
        line["dropout"] = _line_below()
        y = F.dropout(model(x), 0.0)  # F.dropout is Python inside torch; Linear runs F.linear inside torch
        y.sum().backward()
    found = _dynamic(detector)
    assert found["torch.nn.functional.dropout"][1:3] == [HERE, line["dropout"]]
    assert found["torch.nn.Linear"][1:3] == [HERE, line["fc"]]
    assert found[f"{__name__}.Tiny"][1:3] == [HERE, line["dropout"]]
    assert "torch.nn.functional.linear" not in found  # a call inside nn.Linear is not the user's
    assert found["torch.nn.Linear"][3].startswith(f"{HERE}:{line['fc']} in forward <- {HERE}:{line['dropout']} in ")


def test_what_the_optimizer_and_the_code_around_the_loop_do_is_not_recorded():
    weight = torch.zeros(3, requires_grad=True)
    optimizer = torch.optim.Adam([weight], lr=0.1)
    detector = _detector(include_static=True)
    torch.ones(5).sum()  # before the loop
    for n in detector.start([1, 2]):
        (torch.ones(n, 3) * weight).sum().backward()
        optimizer.step()
    torch.ones(7).sum()  # after it
    names = {row[0] for row in rows(detector.sites, include_static=True)}
    assert names == {BATCH, "torch.ones", "torch.Tensor.mul", "torch.Tensor.sum", "torch.Tensor.backward"}
    assert all(row[8] == 2 for row in rows(detector.sites, include_static=True))


def test_the_same_shapes_every_step_are_static_however_many_per_step():
    cell = nn.Linear(4, 4)
    detector = _detector()
    for steps in detector.start([2, 5, 3]):
        h = torch.zeros(1, 4)
        for _ in range(steps):  # an RNN unrolled in Python: a varying count, one shape
            h = cell(h)
        for width in (2, 6):  # a helper called with two shapes, the same two each step
            torch.ones(width).sum()
    assert rows(detector.sites) == []


def test_nested_batches_and_the_remedies_name_the_tensor_to_mark():
    batches = [{"tokens": torch.ones(2, n), "meta": ("id", (torch.ones(3),)), "n": n} for n in (4, 9, 6)]
    detector = _detector()
    for batch in detector.start(batches):
        batch["tokens"].sum()
    batch_row = _dynamic(detector)[BATCH]
    assert batch_row[5] == "[(2, 4)-(2, 9), (3,)-(3,)]"
    assert batch_row[10] == "input 0 (batch['tokens']) dim 1: 4..9 (a length)"
    remedy = batch_row[11]
    assert "torch._dynamo.mark_dynamic(batch['tokens'], 1)" in remedy
    assert "torchport.shapes.pad_to_buckets([4, 6, 8, 10], dims=0)" in remedy
    assert "torch_npu.npu.set_compile_mode(jit_compile=False)" in remedy
    assert "torch._dynamo.mark_dynamic(batch['tokens'], 1)" in detector.summary()


def test_batches_without_tensors_and_generators_that_end_early():
    detector = _detector()

    def three():
        yield from ("a", None, 3)

    for item in detector.start(three(), max_steps=10):
        torch.ones(2).sum()
    assert detector.steps == 3
    for item in detector.start(itertools.count(), max_steps=2):
        pass
    assert detector.steps == 5


def test_a_step_cut_short_is_left_out_and_the_mode_and_hooks_are_gone():
    from torch.nn.modules.module import _global_forward_hooks
    from torch.overrides import _get_current_function_mode

    zero_grad = torch.optim.Optimizer.zero_grad
    detector = _detector()
    for n in detector.start([1, 1, 2]):
        torch.ones(n).sum()
        if n == 2:
            break  # the third step is cut short: its new shape is no evidence
    assert detector.steps == 2 and rows(detector.sites) == []
    with pytest.raises(ValueError):
        for n in detector.start([1, 5]):
            torch.ones(n).sum()
            if n == 5:
                raise ValueError("mid-step")
    assert detector.steps == 3 and rows(detector.sites) == []
    assert _get_current_function_mode() is None and not _global_forward_hooks
    assert torch.optim.Optimizer.zero_grad is zero_grad


def test_a_wrapped_loop_inside_a_wrapped_loop_is_part_of_the_outer_step():
    detector = _detector()
    for outer in detector.start([1, 2]):
        for inner in detector.start([3, 4, 5]):
            torch.ones(outer).sum()
    assert detector.steps == 2


def test_ascends_hook_func_makes_the_call_as_it_is():
    detector = _detector()
    x = torch.ones(2)
    assert torch.equal(detector.hook_func(torch.add, "torch.add", 0, x, other=1), x + 1)


def test_save_writes_ascends_columns_first_and_all_lists_static_sites(tmp_path):
    detector = _detector(report=str(tmp_path / "shapes.csv"))
    for n in detector.start([1, 2]):
        torch.ones(n).sum()
        torch.zeros(3).sum()
    with open(detector.save(), newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0][:6] == ASCEND_COLUMNS
    assert {row[9] for row in table[1:]} == {"yes"}
    detector.configure(include_static=True)
    with open(detector.save(), newline="") as handle:
        assert {row[9] for row in list(csv.reader(handle))[1:]} == {"yes", "no"}
    with pytest.raises(TypeError):
        detector.configure(no_such_setting=1)


def test_each_rank_of_a_torchrun_launch_writes_its_own_report(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    detector = _detector(report=str(tmp_path / "dynamic_shape_report.csv"))
    for n in detector.start([1, 2]):
        torch.ones(n).sum()
    assert detector.save() == str(tmp_path / "dynamic_shape_report.rank1.csv")


def test_a_script_that_dies_leaves_the_report_of_the_steps_it_finished(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import torch
        from torchport.shapes import DETECTOR
        for n in DETECTOR.start(range(1, 10)):
            torch.ones(n).sum()
            if n == 4:
                raise SystemExit("died at step 4")
        """))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "died at step 4" in done.stderr
    with open(tmp_path / "dynamic_shape_report.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    ones = next(row for row in table if row["Function Name"] == "torch.ones")
    assert (ones["File Path"], ones["Line Number"], ones["Iterations"]) == ("train.py", "4", "3")
    assert ones["Output Shape Range"] == "[(1,)-(3,)]"
    assert "torchport shapes: 3 steps" in done.stderr and Path(tmp_path / "train.py").exists()


def test_a_compiled_model_is_one_call_at_the_users_line_and_dynamo_does_not_trace_the_detector():
    import warnings

    import torch._dynamo

    torch._dynamo.reset()
    compiled = torch.compile(nn.Linear(4, 2), backend="eager")
    detector = _detector()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in detector.start([2, 3, 4]):
            line = _line_below()
            compiled(torch.ones(n, 4)).sum().backward()
    assert not [w for w in caught if "Dynamo does not know how to trace" in str(w.message)]
    found = _dynamic(detector)
    assert found["torch._dynamo.eval_frame.OptimizedModule"][2:3] == [line]
    assert found["torch._dynamo.eval_frame.OptimizedModule"][4] == "[(2, 4)-(4, 4)]"
    assert "torch.nn.Linear" not in found and "torch.nn.functional.linear" not in found


def test_a_mode_the_script_leaves_on_the_stack_in_a_step_stays_there_and_ours_goes():
    from torch.overrides import _get_current_function_mode

    detector = _detector()
    try:
        for n in detector.start([1, 2, 3]):
            if n == 1:
                torch.set_default_device("cpu")  # pushes a mode and leaves it on the stack
            torch.ones(n).sum()
        assert type(_get_current_function_mode()).__name__ == "DeviceContext"
        assert torch._C._len_torch_function_stack() == 1
    finally:
        torch.set_default_device(None)
    assert _get_current_function_mode() is None
    assert _dynamic(detector)["torch.Tensor.sum"][8] == 3  # each step recorded once, not twice
