"""convert_source on each named case: apex made native in CUDA's dialect, or the file pointed at
the stand-in package whole; rows at the lines of the file as read; converting twice changes nothing."""

from __future__ import annotations

from textwrap import dedent

import pytest

from torchport.apex_to_torch.driver import convert_source
from torchport.findings import Operation

from _apex_compat_cases import COMPAT
from _apex_native_cases import NATIVE


@pytest.mark.parametrize(("before", "after"), NATIVE)
def test_apex_made_native(before, after):
    converted = convert_source(before, "case.py")
    assert (converted.source, converted.way) == (after, "native")
    assert "apex" not in converted.source.replace("has_apex", "")


@pytest.mark.parametrize(("before", "after", "why"), COMPAT)
def test_a_form_without_a_confident_rewrite_imports_the_stand_in_whole(before, after, why):
    converted = convert_source(before, "case.py")
    assert (converted.source, converted.way) == (after, "compat")
    rows = [f for f in converted.findings if f.code == "TP307"]
    imports = [n for n, line in enumerate(before.splitlines(), 1) if "import" in line and "apex" in line]
    assert [r.start_line for r in rows] == imports
    assert all(why in r.message for r in rows)


@pytest.mark.parametrize("after", [p.values[1] for p in NATIVE + COMPAT], ids=[p.id for p in NATIVE + COMPAT])
def test_converting_the_output_again_changes_nothing(after):
    again = convert_source(after, "case.py")
    assert again.source == after and not again.changed


def test_each_row_is_at_the_line_of_the_file_as_read():
    before = NATIVE[0].values[0]
    rows = {(f.start_line, f.code, f.operation) for f in convert_source(before, "case.py").findings}
    assert rows == {(2, "TP301", Operation.DELETE),  # from apex import amp
                    (7, "TP301", Operation.MODIFY),  # amp.initialize
                    (9, "TP301", Operation.INSERT),  # the forward pass under autocast, from `output = model(images)`
                    (12, "TP302", Operation.MODIFY),  # the with amp.scale_loss
                    (14, "TP302", Operation.MODIFY), (14, "TP302", Operation.INSERT)}  # optimizer.step()


def test_a_dropped_argument_has_its_own_row():
    before = dict((p.id, p.values[0]) for p in NATIVE)["apex.optimizers from-imported -> torchport.optim's twins, apex's weight decay default"]
    messages = [f.message for f in convert_source(before, "case.py").findings if f.start_line == 3]
    assert any("set_grad_none" in m and "dropped" in m for m in messages)
    assert any("weight_decay=0.0 passed" in m for m in messages)


def test_apex_fp16_utils_comes_with_the_native_recipe():
    before = dict((p.id, p.values[0]) for p in COMPAT)["apex.fp16_utils"]
    notes = [f for f in convert_source(before, "case.py").findings if f.operation is Operation.NOTE]
    assert len(notes) == 1 and "GradScaler" in notes[0].message and notes[0].start_line == 3


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.ones(2)\n",
    "# apex was used here once\nimport torch\n",
    "from apex import amp\nprint 'python 2'\n",
], ids=["no apex", "apex only in a comment", "not valid Python"])
def test_a_file_without_apex_to_rewrite_is_returned_as_it_is(source):
    converted = convert_source(source, "case.py")
    assert (converted.source, converted.way, converted.findings) == (source, "", [])


def test_comments_around_the_rewritten_statements_stay():
    before = dedent("""
        from apex import amp

        # mixed precision
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in loader:
            # forward
            loss = crit(model(x), y)  # the loss
            with amp.scale_loss(loss, optimizer) as scaled_loss:  # scaled
                scaled_loss.backward()
            optimizer.step()  # step
        """).lstrip()
    after = convert_source(before, "case.py").source
    for comment in ("# mixed precision", "# forward", "# the loss", "# step"):
        assert comment in after
    assert after.index("# mixed precision") < after.index("scaler = ")
    assert after.index("# forward") < after.index("with torch.amp.autocast")
