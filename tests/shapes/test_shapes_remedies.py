"""The remedies fit what varied: which tensor, which dim, and what that dim is (#24, point 4).

Most cases build the loader's batch site directly, step by step, as the detector records it; the
two trainers of _remedy_scripts.py run under `torchport shapes` in this process.
"""

from __future__ import annotations

import csv
import os
import sys
import textwrap

import pytest

from torchport.shapes.batchdims import BATCH_SIZE, COUNT, LENGTH, batch_dims
from torchport.shapes.batchnames import loop_names
from torchport.shapes.report import rows, summary
from torchport.shapes.sites import BATCH, Site

sys.path.insert(0, os.path.dirname(__file__))
import _remedy_scripts as scripts  # noqa: E402

DROP_LAST = "drop_last=True"
COMPILE_MODE = "torch_npu.npu.set_compile_mode(jit_compile=False)"


def _batch_site(steps, paths=None, file="train.py", line=1) -> Site:
    """A loader's batch site that saw `steps` (each a tuple of shapes), in that order."""
    width = max(len(shapes) for shapes in steps)
    site = Site(file, line, 1, BATCH, "", paths or [f"batch[{index}]" for index in range(width)])
    for shapes in steps:
        site.current = {((), tuple(shapes))}
        site.commit()
    return site


def _batch_row(site: Site) -> dict:
    return dict(zip(["varying", "remedy"], rows([site])[0][10:12]))


def _kinds(site: Site) -> list[tuple[int, int, str, bool]]:
    return [(d.varying.position, d.varying.dim, d.kind, d.short_last) for d in batch_dims(site)]


def _yolo_steps(counts):
    return [((4, 3, 32, 32), (n, 6)) for n in counts]


def test_full_batches_whose_box_count_varies_get_row_padding_never_drop_last():
    site = _batch_site(_yolo_steps([19, 23, 18, 22] * 2))
    assert _kinds(site) == [(1, 0, COUNT, False)]
    row = _batch_row(site)
    assert row["varying"] == "input 1 (batch[1]) dim 0: 18..23 (a count, not the batch)"
    assert DROP_LAST not in row["remedy"] and "pad_to_buckets" not in row["remedy"]
    assert "pad the rows of batch[1] to a few counts [18, 20, 22, 24]" in row["remedy"]
    assert COMPILE_MODE in row["remedy"] and "torch._dynamo.mark_dynamic(batch[1], 0)" in row["remedy"]
    said = summary([site], 8, None)
    assert DROP_LAST not in said and "drop_last would not help" in said


def test_a_dict_batch_of_boxes_as_ultralytics_makes_it_is_counts_beside_full_images():
    steps = [((4, 3, 64, 64), (n, 1), (n, 4), (n,)) for n in (7, 12, 9)]
    site = _batch_site(steps, ["batch['img']", "batch['cls']", "batch['bboxes']", "batch['batch_idx']"])
    assert _kinds(site) == [(1, 0, COUNT, False), (2, 0, COUNT, False), (3, 0, COUNT, False)]
    assert "pad the rows of batch['cls'], batch['bboxes'], batch['batch_idx']" in _batch_row(site)["remedy"]


def test_a_short_last_batch_in_each_epoch_gets_drop_last_and_the_length_buckets():
    epoch = [((4, 8), (4,)), ((4, 9), (4,)), ((2, 8), (2,))]
    site = _batch_site(epoch * 2)
    assert _kinds(site) == [(0, 0, BATCH_SIZE, True), (0, 1, LENGTH, False), (1, 0, BATCH_SIZE, True)]
    row = _batch_row(site)
    assert row["varying"].startswith("input 0 (batch[0]) dim 0: 2..4 (the batch size, smaller in the last batch)")
    assert "DataLoader(..., drop_last=True)" in row["remedy"]
    assert "collate_fn=torchport.shapes.pad_to_buckets([8, 9], dims=0)" in row["remedy"]


def test_a_run_cut_short_mid_epoch_still_shows_the_short_last_batch():
    sizes = [4, 4, 2, 4]  # --steps 4 over passes of three steps
    assert _kinds(_batch_site([((n, 5),) for n in sizes])) == [(0, 0, BATCH_SIZE, True)]


@pytest.mark.parametrize("sizes", [
    pytest.param([4, 4, 2, 4, 4, 4], id="a small batch that is not the last of its pass"),
    pytest.param([4, 2, 3, 4, 1], id="a sampler that batches by token count"),
    pytest.param([2, 4, 4, 4], id="the small batch first"),
])
def test_a_batch_size_that_varies_elsewhere_is_not_drop_lasts(sizes):
    site = _batch_site([((n, 5),) for n in sizes])
    assert _kinds(site) == [(0, 0, BATCH_SIZE, False)]
    remedy = _batch_row(site)["remedy"]
    assert DROP_LAST not in remedy and "batches of one size" in remedy


def test_a_length_varying_with_full_batches_is_padded_to_buckets_only():
    site = _batch_site([((8, n), (8,)) for n in (5, 17, 9, 30)])
    assert _kinds(site) == [(0, 1, LENGTH, False)]
    remedy = _batch_row(site)["remedy"]
    assert "pad_to_buckets([8, 16, 24, 32], dims=0)" in remedy and DROP_LAST not in remedy


def test_the_batch_tensors_are_told_from_the_counts_whatever_their_order():
    # boxes first, then the images: the images' dim 0 takes fewer sizes, so it is the batch
    site = _batch_site([((n, 6), (4, 3, 16, 16)) for n in (3, 9, 5)] + [((2, 6), (2, 3, 16, 16))])
    assert [kind for _, _, kind, _ in _kinds(site)] == [COUNT, BATCH_SIZE]


def test_call_sites_name_their_inputs_and_outputs_and_get_the_targets_remedy():
    site = Site("train.py", 3, 5, "torch.cat", "")
    for n in (2, 5):
        site.current = {(((n, 4), (3, 4)), ((n + 3, 4),))}
        site.commit()
    varying, remedy = rows([site])[0][10:12]
    assert varying == "input 0 dim 0: 2..5; output 0 dim 0: 5..8"
    assert remedy == f"npu: {COMPILE_MODE} | torch.compile: torch._dynamo.mark_dynamic(<input 0>, 0)"


LOOPS = textwrap.dedent("""\
    for i, (imgs, targets, paths, _) in enumerate(pbar):
        pass
    for batch in loader:
        pass
    for step, batch in enumerate(
            loader):
        pass
    for first, *rest in loader:
        pass
    """)


@pytest.mark.parametrize("line, paths, names", [
    pytest.param(1, ["batch[1][0]", "batch[1][1]"], ["imgs", "targets"], id="yolov5's unpacked tuple"),
    pytest.param(1, ["batch[1][3]"], ["batch[1][3]"], id="a tensor bound to _ keeps its path"),
    pytest.param(3, ["batch['img']"], ["batch['img']"], id="a dict under the loop variable"),
    pytest.param(6, ["batch[1]['input_ids']"], ["batch['input_ids']"], id="enumerate, its iterable on the next line"),
    pytest.param(8, ["batch[0]", "batch[1]"], ["first", "batch[1]"], id="a starred target names what precedes it"),
    pytest.param(99, ["batch[0]"], ["batch[0]"], id="no loop at that line"),
])
def test_the_batch_is_named_as_the_loop_unpacks_it(tmp_path, line, paths, names):
    (tmp_path / "train.py").write_text(LOOPS)
    assert loop_names(str(tmp_path / "train.py"), line, paths) == names


def test_a_file_that_cannot_be_read_keeps_the_paths(tmp_path):
    (tmp_path / "broken.py").write_text("for x in (:\n")
    assert loop_names(str(tmp_path / "broken.py"), 1, ["batch[0]"]) == ["batch[0]"]
    assert loop_names(str(tmp_path / "missing.py"), 1, ["batch[0]"]) == ["batch[0]"]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _report(directory) -> dict[str, dict]:
    with open(directory / "dynamic_shape_report.csv", newline="") as handle:
        return {(row["Function Name"], row["Line Number"]): row for row in csv.DictReader(handle)}


def test_the_yolo_trainer_gets_row_padding_for_its_targets_never_drop_last(cli, in_tmp):
    (in_tmp / "yolo.py").write_text(scripts.YOLO)
    status, out, err = cli("shapes", "yolo.py")
    assert status == 0 and "trained" in out, err
    line = str(scripts.YOLO.splitlines().index("    for i, (imgs, targets) in enumerate(loader):") + 1)
    batch = _report(in_tmp)[(BATCH, line)]
    assert batch["Varying Dims"] == "input 1 (targets) dim 0: 18..23 (a count, not the batch)"
    assert "torch._dynamo.mark_dynamic(targets, 0)" in batch["Remedy"]
    assert DROP_LAST not in batch["Remedy"] + err and "pad the rows of targets" in err


def test_the_text_trainer_gets_buckets_and_drop_last(cli, in_tmp):
    (in_tmp / "text.py").write_text(scripts.TEXT)
    status, out, err = cli("shapes", "text.py")
    assert status == 0 and "trained" in out, err
    batch = next(row for (name, _), row in _report(in_tmp).items() if name == BATCH)
    assert batch["Varying Dims"] == ("input 0 (tokens) dim 0: 2..4 (the batch size, smaller in the last batch); "
                                     "input 0 (tokens) dim 1: 8..9 (a length); "
                                     "input 1 (labels) dim 0: 2..4 (the batch size, smaller in the last batch)")
    for remedy in (COMPILE_MODE, "pad_to_buckets([8, 9], dims=0)", "DataLoader(..., drop_last=True)"):
        assert remedy in batch["Remedy"] and remedy in err


def _call_site(name, line, steps) -> Site:
    site = Site("train.py", line, 1, name, "")
    for inputs, outputs in steps:
        site.current = {(tuple(inputs), tuple(outputs))}
        site.commit()
    return site


def test_sizes_the_step_makes_itself_are_named_where_they_start_and_carried_ones_are_not():
    counts = [19, 23, 18, 22]
    batch = _batch_site(_yolo_steps(counts), line=10)
    sides = [32, 48, 64, 32]
    conv = _call_site("torch.nn.Conv2d", 12, [([(4, 3, s, s)], [(4, 8, s // 2, s // 2)]) for s in sides])
    resize = _call_site("torch.nn.functional.interpolate", 11, [([(4, 3, 32, 32)], [(4, 3, s, s)]) for s in sides])
    loss = _call_site("torch.Tensor.__getitem__", 13, [([(n, 6)], [(n,)]) for n in counts])  # carried: targets' rows
    said = summary([batch, conv, resize, loss], 4, None)
    assert "in the step    train.py:11 torch.nn.functional.interpolate and 1 more: sizes the loader's batches do " \
           "not have" in said
    assert "pad the rows of batch[1]" in said and DROP_LAST not in said
    assert "in the step" not in summary([batch, loss], 4, None)  # the loss only carries the targets' count


def test_the_npus_remedy_is_its_own_and_a_function_of_the_torch_npu_wheel():
    from torchport import targets
    from torchport.targets.surface import names

    remedy = targets.all_targets()["npu"].advice.varying_shapes
    module, _, function = remedy.partition("(")[0].rpartition(".")
    assert remedy == COMPILE_MODE and function in names("torch_npu-2.14.0.json", module)
