"""`pad_to_buckets`: a collate function that pads the varying dims of a batch up to a few sizes.

    loader = DataLoader(dataset, batch_size=32, collate_fn=pad_to_buckets([32, 64, 128]))
    for (tokens, labels), in_mask ... :            # see "What a batch looks like" below

Sequences of 1..128 tokens make up to 128 shapes, each compiled again on an NPU or by
torch.compile; padded to 32, 64 or 128 they make three. Padding to the batch's longest sample
(what most collate functions do) does not help: that length still changes from batch to batch.

What a batch looks like: as `default_collate` makes it, each padded field stacked at its
bucket size, plus a boolean mask per padded field, True where the data is real (as Hugging Face's
attention_mask; `nn.MultiheadAttention`'s key_padding_mask wants the opposite, `~mask`):
- samples that are tensors: `(batch, mask)`;
- tuples or lists: the collated fields, then one mask per padded field, in field order;
- dicts: the collated dict, plus `"<key>_mask"` for each padded key.
With `mask=False` the batch has exactly default_collate's structure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def pad_to_buckets(buckets: Sequence[int], dims: int | Sequence[int] = 0, pad_value=0,
                   fields: Sequence | None = None, mask: bool = True) -> "BucketCollate":
    """A collate function padding dims `dims` of each sample's tensors up to the smallest bucket
    that holds the batch's longest.

    buckets: the sizes, e.g. [32, 64, 128]; a sample longer than the largest is an error.
    dims: the sample's dims to pad (0 for token sequences (L,) or (L, D); (1, 2) for images (C, H, W)).
    pad_value: the fill, or a dict field -> fill (e.g. {"labels": -100}).
    fields: which fields to pad (tuple indices or dict keys); default: every tensor field that
      has the dims (a label per sample is then left alone).
    mask: add the padding masks (see the module's docstring).
    """
    return BucketCollate(buckets, dims, pad_value, fields, mask)


class BucketCollate:
    """The callable pad_to_buckets returns (a class, so that DataLoader workers can pickle it)."""

    def __init__(self, buckets, dims, pad_value, fields, mask) -> None:
        sizes = sorted({int(size) for size in buckets}) if buckets is not None else []
        if not sizes or sizes[0] < 1:
            raise ValueError("pad_to_buckets: give one or more bucket sizes, each at least 1")
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if not dims or any(not isinstance(dim, int) or dim < 0 for dim in dims):
            raise ValueError("pad_to_buckets: dims are the sample's dims to pad, non-negative ints (0, or (1, 2))")
        self.buckets, self.dims, self.pad_value = sizes, tuple(sorted(set(dims))), pad_value
        self.fields = None if fields is None else list(fields)
        self.mask = mask

    def __call__(self, samples: list):
        import torch
        from torch.utils.data import default_collate

        if not samples:
            raise ValueError("pad_to_buckets: an empty batch")
        first = samples[0]
        if isinstance(first, torch.Tensor):
            padded, mask = self._pad(samples, None)
            return (padded, mask) if self.mask else padded
        if isinstance(first, Mapping):
            batch, masks = {}, {}
            for key in first:
                values = [sample[key] for sample in samples]
                if self._chosen(key, values, torch):
                    batch[key], masks[key] = self._pad(values, key)
                else:
                    batch[key] = default_collate(values)
            if self.mask:
                batch.update({f"{key}_mask": mask for key, mask in masks.items()})
            return batch
        if isinstance(first, (tuple, list)) and not isinstance(first, str):
            batch, masks = [], []
            for index, values in enumerate(zip(*samples)):
                values = list(values)
                if self._chosen(index, values, torch):
                    padded, mask = self._pad(values, index)
                    batch.append(padded)
                    masks.append(mask)
                else:
                    batch.append(default_collate(values))
            return tuple(batch) + (tuple(masks) if self.mask else ())
        return default_collate(samples)

    def bucket(self, size: int) -> int:
        """The smallest bucket that holds `size`."""
        for bucket in self.buckets:
            if size <= bucket:
                return bucket
        raise ValueError(f"pad_to_buckets: a sample of size {size} does not fit the largest bucket "
                         f"{self.buckets[-1]}: add a larger bucket or truncate the samples")

    def _chosen(self, field, values, torch) -> bool:
        if self.fields is not None:
            return field in self.fields
        return all(isinstance(v, torch.Tensor) and v.dim() > self.dims[-1] for v in values)

    def _pad(self, values, field):
        import torch

        if not all(isinstance(v, torch.Tensor) and v.dim() > self.dims[-1] for v in values):
            raise ValueError(f"pad_to_buckets: field {field!r} must hold tensors with dims {self.dims} in every sample")
        shape = list(values[0].shape)
        for dim in range(len(shape)):
            sizes = {v.shape[dim] for v in values}
            if dim in self.dims:
                shape[dim] = self.bucket(max(sizes))
            elif len(sizes) > 1 or any(v.dim() != len(shape) for v in values):
                raise ValueError(f"pad_to_buckets: field {field!r} varies in dim {dim}, which is not "
                                 f"among dims={self.dims}")
        fill = self.pad_value.get(field, 0) if isinstance(self.pad_value, Mapping) else self.pad_value
        padded = values[0].new_full((len(values), *shape), fill)
        mask = torch.zeros((len(values), *(shape[dim] for dim in self.dims)), dtype=torch.bool)
        for row, value in enumerate(values):
            padded[row][tuple(slice(0, size) for size in value.shape)] = value
            mask[row][tuple(slice(0, value.shape[dim]) for dim in self.dims)] = True
        return padded, mask
