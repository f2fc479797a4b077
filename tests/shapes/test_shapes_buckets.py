"""pad_to_buckets: padded sizes, masks, structures, errors, and fewer torch.compile recompilations."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from torchport.shapes import pad_to_buckets


def _sequence(length: int, width: int = 2) -> torch.Tensor:
    return torch.arange(1, length * width + 1, dtype=torch.float32).reshape(length, width)


def test_sequences_are_padded_to_the_smallest_bucket_that_holds_the_longest():
    collate = pad_to_buckets([4, 8, 16])
    batch, mask = collate([_sequence(3), _sequence(6)])
    assert batch.shape == (2, 8, 2) and mask.shape == (2, 8)
    assert torch.equal(batch[1, :6], _sequence(6)) and torch.equal(batch[0, :3], _sequence(3))
    assert batch[0, 3:].abs().sum() == 0
    assert mask.sum(dim=1).tolist() == [3, 6] and mask[0, :3].all() and not mask[0, 3:].any()


def test_tuples_keep_their_fields_and_the_masks_follow():
    collate = pad_to_buckets([4, 8], pad_value={0: -1.0})
    tokens, labels, mask = collate([(_sequence(2), 0), (_sequence(4), 1)])
    assert tokens.shape == (2, 4, 2) and tokens[0, 2:].eq(-1).all()
    assert labels.tolist() == [0, 1] and mask.tolist() == [[True, True, False, False], [True] * 4]
    tokens, labels = pad_to_buckets([8], mask=False)([(_sequence(2), 0), (_sequence(4), 1)])
    assert tokens.shape == (2, 8, 2)


def test_dicts_images_and_chosen_fields():
    images = [{"image": torch.ones(3, 5, 7), "label": torch.tensor(1)},
              {"image": torch.ones(3, 9, 6), "label": torch.tensor(0)}]
    batch = pad_to_buckets([8, 16], dims=(1, 2))(images)
    assert batch["image"].shape == (2, 3, 16, 8) and batch["label"].tolist() == [1, 0]
    assert batch["image_mask"].shape == (2, 16, 8) and batch["image_mask"][0].sum() == 5 * 7
    only = pad_to_buckets([8], fields=["a"])([{"a": torch.ones(3), "b": torch.ones(2)}] * 2)
    assert only["a"].shape == (2, 8) and only["b"].shape == (2, 2) and "b_mask" not in only


def test_what_cannot_be_padded_is_a_clear_error():
    with pytest.raises(ValueError, match="does not fit the largest bucket 8"):
        pad_to_buckets([4, 8])([_sequence(9)])
    with pytest.raises(ValueError, match="varies in dim 1, which is not among dims"):
        pad_to_buckets([8])([torch.ones(2, 3), torch.ones(2, 4)])
    with pytest.raises(ValueError, match="one or more bucket sizes"):
        pad_to_buckets([])
    with pytest.raises(ValueError, match="non-negative ints"):
        pad_to_buckets([8], dims=-1)


def test_bucketing_cuts_torch_compile_recompilations_to_the_bucket_count():
    """Each batch length is a new graph for torch.compile(dynamic=False); padded to buckets, at most
    one per bucket. Counted from torch._dynamo's own counters, on the CPU (eager backend)."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    lengths = [3, 5, 6, 7, 9, 11]
    samples = [(_sequence(n), n % 2) for n in lengths]

    def pad_to_longest(batch):  # what a usual collate does: the longest of this batch
        sequences = torch.nn.utils.rnn.pad_sequence([s for s, _ in batch], batch_first=True)
        return sequences, torch.tensor([label for _, label in batch])

    def graphs(collate) -> int:
        torch._dynamo.reset()
        counters.clear()
        model = torch.compile(torch.nn.Linear(2, 2), backend="eager", dynamic=False)
        for sequences, *_ in DataLoader(samples, batch_size=1, collate_fn=collate):
            model(sequences).sum()
        return counters["stats"]["unique_graphs"]

    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
    with torch._dynamo.config.patch({limit: 64}):
        unbucketed = graphs(pad_to_longest)
        bucketed = graphs(pad_to_buckets([8, 16]))
    assert unbucketed == len(lengths)
    assert bucketed <= 2
