"""A printed profiler table, a chrome trace and a live capture of the same training steps list the
same aten ops: the three ways in to `ops check` agree."""

from __future__ import annotations

from torchport.ops import kernels, table, trace

DATA = kernels.default()


def _table_ops(text: str):
    result = table.parse(text, DATA)
    assert result.problem is None and result.tables == 1
    return result.ops


def _trace_ops(path):
    result = trace.parse(path.read_text(), DATA)
    assert result.problem is None and result.with_shapes
    return result.ops


def test_table_trace_and_capture_list_the_same_ops(profiled):
    captured = profiled.captured.names()
    assert {"aten::addmm", "aten::convolution", "aten::native_batch_norm", "aten::mm"} <= captured
    assert _table_ops(profiled.table).names() == captured
    assert _trace_ops(profiled.trace).names() == captured


def test_ops_no_backend_runs_are_left_out_by_every_source(profiled):
    for ops in (_table_ops(profiled.table), _trace_ops(profiled.trace), profiled.captured):
        assert not {"aten::linear", "aten::conv2d", "aten::batch_norm", "aten::cross_entropy_loss"} & ops.names()
    assert "aten::linear" in profiled.table  # the profiler did print it


def test_the_three_count_the_same_calls_of_the_layers(profiled):
    sources = (_table_ops(profiled.table), _trace_ops(profiled.trace), profiled.captured)
    for name in ("aten::addmm", "aten::convolution", "aten::convolution_backward", "aten::native_batch_norm"):
        assert {ops.records[name].count for ops in sources} == {2}, name  # once a step
    assert {ops.records["aten::mm"].count for ops in sources} == {4}  # the gradients of input and weight


def test_shapes_and_dtypes_agree_between_trace_and_capture(profiled):
    traced, captured = _trace_ops(profiled.trace).records, profiled.captured.records
    addmm = [[5], [2, 36], [36, 5], [], []]  # bias, input, weight.t(), beta, alpha
    assert traced["aten::addmm"].shapes == captured["aten::addmm"].shapes == [addmm]
    assert _table_ops(profiled.table).records["aten::addmm"].shapes == [addmm]
    for name in ("aten::addmm", "aten::nll_loss_forward", "aten::max_pool2d_with_indices_backward"):
        assert traced[name].dtypes == captured[name].dtypes != [], name
    assert captured["aten::nll_loss_forward"].dtypes == ["float32", "int64"]


def test_trace_and_capture_agree_on_which_op_each_call_was_made_inside(profiled):
    traced, captured = _trace_ops(profiled.trace).records, profiled.captured.records
    # the profiler files some detach calls under a plain "detach", so their counts differ
    assert {name: (r.top_level, r.callers) for name, r in traced.items() if name != "aten::detach"} == {
        name: (r.top_level, r.callers) for name, r in captured.items() if name != "aten::detach"
    }
    assert captured["aten::addmm"].top_level == 2 and captured["aten::addmm"].callers == {}
    assert captured["aten::clamp_min"].callers == {"aten::relu": 2}  # relu's CPU kernel calls it
    assert captured["aten::mkldnn_convolution"].callers == {"aten::_convolution": 2}
    table_addmm = _table_ops(profiled.table).records["aten::addmm"]
    assert table_addmm.top_level is None and table_addmm.callers is None  # a table cannot tell


def test_a_table_inside_a_log_with_a_prefix_on_every_line_is_read(profiled):
    log = "epoch 1 loss 0.3\n" + "\n".join(f"[rank0]: {line}" for line in profiled.table.splitlines())
    log += "\nepoch 2 loss 0.2\n"
    assert _table_ops(log).names() == profiled.captured.names()


def test_two_tables_in_one_log_add_up(profiled):
    ops = table.parse(f"{profiled.table}\nnext epoch\n{profiled.table}", DATA).ops
    assert ops.records["aten::addmm"].count == 4


def _cut(text: str, name: str, keep: int) -> str:
    """The table as if its name column had cut `name` after `keep` characters (right-aligned)."""
    assert name in text
    return text.replace(name, (name[:keep] + "...").rjust(len(name)))


def test_a_name_cut_short_by_the_table_is_completed_when_only_one_op_starts_so(profiled):
    cut = _cut(profiled.table, "aten::max_pool2d_with_indices_backward", 31)
    result = table.parse(cut, DATA)
    assert "aten::max_pool2d_with_indices_backward" in result.ops.names() and not result.unresolved
    result = table.parse(_cut(profiled.table, "aten::native_batch_norm_backward", 20), DATA)
    assert result.unresolved == ["aten::native_batch_n..."]  # native_batch_norm too
    assert "aten::native_batch_norm_backward" not in result.ops.names()
