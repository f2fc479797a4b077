"""Ascend apex's combine_npu (ModelZoo's hand-written fused optimizers): the tensors become views
of one flat buffer, so one op on the buffer updates each of them, their values kept."""

import torch

from torchport.compat.apex.contrib.combine_tensors import (
    combine_npu, get_part_combined_tensor, is_combined_tensor_valid)


def test_the_tensors_become_views_of_one_buffer_with_their_values():
    a, b = torch.arange(6.).reshape(2, 3), torch.tensor([7., 8.])
    combined = combine_npu([a, b])
    assert combined.tolist() == [0., 1., 2., 3., 4., 5., 7., 8.]
    assert a.tolist() == [[0., 1., 2.], [3., 4., 5.]] and b.tolist() == [7., 8.]
    combined.mul_(2)  # (one op for all: what the fused optimizers do)
    assert a[1, 2].item() == 10. and b.tolist() == [14., 16.]
    assert is_combined_tensor_valid(combined, [a, b])
    assert get_part_combined_tensor(combined, 6, 2).tolist() == [14., 16.]


def test_without_copying_only_the_layout_is_made_and_nothing_is_none():
    a = torch.ones(3)
    combined = combine_npu([a], require_copy_value=False)
    assert combined.tolist() == [0., 0., 0.] and a.tolist() == [0., 0., 0.]
    assert combine_npu([torch.ones(0)]) is None and get_part_combined_tensor(None, 0, 3) is None
    assert not is_combined_tensor_valid(combined, [torch.ones(3)])
