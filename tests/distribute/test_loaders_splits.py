"""A dict of split loaders built by a comprehension (`{x: DataLoader(sets[x], ...) for x in
['train', 'val']}`, the transfer-learning tutorial's spelling): a dict of samplers beside it,
a sampler for the training split only."""

from __future__ import annotations

import textwrap

import torch

from torchport.distribute import Options
from torchport.distribute.loaders import shard_loaders
from torchport.findings import Operation

TUTORIAL = """\
import torch
image_datasets = {x: datasets.ImageFolder(os.path.join(data_dir, x), data_transforms[x]) for x in ['train', 'val']}
dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4, shuffle=True, num_workers=4) for x in ['train', 'val']}


def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            for inputs, labels in dataloaders[phase]:
                pass
"""


def shard(source: str):
    return shard_loaders(textwrap.dedent(source), None, Options())


def test_the_tutorials_dict_of_loaders_gets_a_sampler_for_its_training_split():
    out, changes = shard(TUTORIAL)
    lines = out.splitlines()
    assert lines[2] == ("samplers = {x: torch.utils.data.distributed.DistributedSampler(image_datasets[x], shuffle=True) "
                        "if WORLD_SIZE > 1 and x == 'train' else None for x in ['train', 'val']}")
    assert lines[3] == ("dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4 // WORLD_SIZE if x == 'train' "
                        "else 4, shuffle=(samplers[x] is None), sampler=samplers[x], num_workers=4) for x in ['train', 'val']}")
    assert [line.strip() for line in lines[8:10]] == ["if samplers['train'] is not None:", "samplers['train'].set_epoch(epoch)"]
    inserted = [c for c in changes if c.code == "TP202" and c.operation == Operation.INSERT]
    assert "training split (train)" in inserted[0].message and "the others left whole" in inserted[0].message


def test_several_training_keys_each_get_a_sampler():
    out, _ = shard("""\
        import torch
        loaders = {s: torch.utils.data.DataLoader(sets[s], batch_size=8) for s in ("train", "train_extra", "test")}
        """)
    assert 'if WORLD_SIZE > 1 and s in ("train", "train_extra") else None' in out


def test_a_split_dataset_built_in_the_comprehension_is_built_once():
    out, _ = shard("""\
        import torch
        dataloaders = {x: torch.utils.data.DataLoader(ImageFolder(root / x), batch_size=8) for x in ['train', 'val']}
        """)
    assert "datasets = {x: ImageFolder(root / x) for x in ['train', 'val']}" in out
    assert "DistributedSampler(datasets[x], shuffle=False)" in out and "DataLoader(datasets[x]," in out


def test_splits_none_of_which_trains_are_left_whole():
    source = ("import torch\ndataloaders = {x: torch.utils.data.DataLoader(sets[x], batch_size=8, shuffle=False) "
              "for x in ['gallery', 'query']}\n")
    out, changes = shard(source)
    assert out == source and "validation" in changes[0].message


def test_splits_this_step_cannot_read_are_left_whole_with_a_row():
    source = "import torch\ndataloaders = {x: torch.utils.data.DataLoader(sets[x], batch_size=8) for x in names}\n"
    out, changes = shard(source)
    assert out == source and "comprehension over splits" in changes[0].message


def test_without_a_launcher_every_split_reads_as_before():
    source = textwrap.dedent("""\
        import torch
        torch.manual_seed(0)
        sets = {"train": list(range(10)), "val": list(range(10, 16))}
        dataloaders = {x: torch.utils.data.DataLoader(sets[x], batch_size=4, shuffle=True) for x in ['train', 'val']}
        """)
    out, _ = shard_loaders(source, None, Options())

    def batches(code, scope):
        exec(compile(code, "<splits>", "exec"), scope)
        return {k: [b.tolist() for b in loader] for k, loader in scope["dataloaders"].items()}

    assert batches(out, {"WORLD_SIZE": 1}) == batches(source, {})
    assert torch.utils.data.distributed.DistributedSampler  # (what the rewritten code names)
