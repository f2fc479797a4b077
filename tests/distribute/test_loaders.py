"""The loader step of --distributed: a DistributedSampler on the training loaders (the ImageNet
example's idiom), validation loaders and users' samplers left whole with a row."""

from __future__ import annotations

import textwrap

import pytest
import torch

from torchport.distribute import Options, distribute_source
from torchport.distribute.loaders import shard_loaders
from torchport.findings import Operation


def shard(source: str, batch: str = "global"):
    return shard_loaders(textwrap.dedent(source), None, Options(batch=batch))


def rows(changes, code="TP202", operation=None):
    return [c for c in changes if c.code == code and (operation is None or c.operation == operation)]


def test_a_training_loader_gets_the_imagenet_idiom_above_it():
    out, changes = shard("""\
        import torch
        from torch.utils.data import DataLoader
        train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
        """)
    assert out == textwrap.dedent("""\
        import torch
        from torch.utils.data import DataLoader
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True) if WORLD_SIZE > 1 else None
        train_loader = DataLoader(train_set, batch_size=64 // WORLD_SIZE, shuffle=(train_sampler is None), sampler=train_sampler, num_workers=4)
        """)
    [insert] = rows(changes, operation=Operation.INSERT)
    assert (insert.start_line, insert.end_line) == (3, 3) and "train_sampler" in insert.message


@pytest.mark.parametrize("imports, spelled", [
    ("from torch.utils.data import DataLoader", "DataLoader"),
    ("from torch.utils import data", "data.DataLoader"),
    ("import torch.utils.data", "torch.utils.data.DataLoader"),
    ("import torch.utils.data as tud", "tud.DataLoader"),
    ("from torch.utils.data.dataloader import DataLoader", "DataLoader"),
    ("from torch.utils.data import DataLoader as DL", "DL"),
    ("import torch.utils.data.dataloader as dl", "dl.DataLoader"),
])
def test_every_spelling_of_torchs_dataloader_is_found(imports, spelled):
    out, _ = shard(f"import torch\n{imports}\ntrain_loader = {spelled}(train_set, batch_size=8, shuffle=True)\n")
    assert "train_sampler = torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True)" in out
    assert f"{spelled}(train_set, batch_size=8 // WORLD_SIZE, shuffle=(train_sampler is None), sampler=train_sampler)" in out


@pytest.mark.parametrize("source", [
    "from torch_geometric.loader import DataLoader\ntrain_loader = DataLoader(train_set, shuffle=True)\n",
    "class DataLoader:\n    pass\ntrain_loader = DataLoader(train_set, shuffle=True)\n",
])
def test_a_dataloader_that_is_not_torchs_is_left_alone(source):
    assert shard(source) == (source, [])


def test_a_dataset_given_as_a_call_is_built_once_for_the_sampler_and_the_loader():
    out, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(datasets.ImageFolder(traindir, transform), batch_size=32, shuffle=True)
        """)
    assert out.splitlines()[1:] == [
        "train_dataset = datasets.ImageFolder(traindir, transform)",
        "train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=True) if WORLD_SIZE > 1 else None",
        "train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=32 // WORLD_SIZE, shuffle=(train_sampler is None), sampler=train_sampler)",
    ]


@pytest.mark.parametrize("shuffle, sampler_shuffle, loader_shuffle", [
    ("shuffle=True", "True", "shuffle=(train_sampler is None)"),
    ("shuffle=args.shuffle", "args.shuffle", "shuffle=args.shuffle and train_sampler is None"),
    ("shuffle=a or b", "a or b", "shuffle=(a or b) and train_sampler is None"),
    ("shuffle=False", "False", "shuffle=False"),
    ("shuffle=None", "False", "shuffle=None"),
])
def test_the_shuffle_moves_into_the_sampler_and_stays_on_the_loader_only_without_one(shuffle, sampler_shuffle, loader_shuffle):
    out, _ = shard(f"import torch\ntrain_loader = torch.utils.data.DataLoader(train_set, batch_size=8, {shuffle})\n")
    assert f"DistributedSampler(train_set, shuffle={sampler_shuffle}) if WORLD_SIZE > 1 else None" in out
    assert f"{loader_shuffle}, sampler=train_sampler)" in out


def test_no_shuffle_given_gives_a_sampler_that_keeps_the_order():
    out, _ = shard("import torch\ntrain_loader = torch.utils.data.DataLoader(train_set, batch_size=8)\n")
    assert "DistributedSampler(train_set, shuffle=False)" in out
    assert "DataLoader(train_set, batch_size=8 // WORLD_SIZE, sampler=train_sampler)" in out


def test_arguments_given_by_position_are_rewritten_in_place():
    out, _ = shard("import torch\ntrain_loader = torch.utils.data.DataLoader(train_set, 16, True, None, None, 2)\n")
    assert "DataLoader(train_set, 16 // WORLD_SIZE, (train_sampler is None), train_sampler, None, 2)" in out


def test_the_sampler_keyword_follows_shuffle_and_the_calls_line_breaks_stay():
    out, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(
            train_set,
            batch_size=8,
            shuffle=True,
            num_workers=2,
        )
        """)
    assert out.splitlines()[2:] == [
        "train_loader = torch.utils.data.DataLoader(",
        "    train_set,",
        "    batch_size=8 // WORLD_SIZE,",
        "    shuffle=(train_sampler is None), sampler=train_sampler,",
        "    num_workers=2,",
        ")",
    ]


def test_comments_above_the_loader_stay_above_what_is_put_before_it():
    out, _ = shard("import torch\n\n# the training data\ntrain_loader = torch.utils.data.DataLoader(train_set, shuffle=True)\n")
    assert out.splitlines()[1:4] == ["", "# the training data", out.splitlines()[3]]
    assert out.splitlines()[3].startswith("train_sampler = ")


@pytest.mark.parametrize("argument", ["sampler=RandomSampler(train_set)", "batch_sampler=my_batches"])
def test_a_users_own_sampler_is_kept_and_said(argument):
    source = f"import torch\ntrain_loader = torch.utils.data.DataLoader(train_set, batch_size=8, {argument})\n"
    out, changes = shard(source)
    assert out == source
    [note] = rows(changes)
    assert note.operation == Operation.NOTE and "own sampler" in note.message and "kept" in note.message


@pytest.mark.parametrize("source, why", [
    ("val_loader = torch.utils.data.DataLoader(val_set, batch_size=8)", "its name"),
    ("testloader = torch.utils.data.DataLoader(ds, batch_size=8)", "its name"),
    ("eval_dl = torch.utils.data.DataLoader(ds, batch_size=8)", "its name"),
    ("dev_loader = torch.utils.data.DataLoader(ds, batch_size=8)", "its name"),
    ("loader = torch.utils.data.DataLoader(datasets.CIFAR10(root, train=False), batch_size=8)", "its dataset"),
    ("loader = torch.utils.data.DataLoader(VOC(root, image_set='val'), batch_size=8)", "its dataset"),
    ("loader = torch.utils.data.DataLoader(datasets.ImageFolder(valdir), batch_size=8)", "its dataset"),
])
def test_a_validation_loader_is_left_whole_with_a_row(source, why):
    source = f"import torch\n{source}\n"
    out, changes = shard(source)
    assert out == source
    [note] = rows(changes)
    assert note.operation == Operation.NOTE and "validation" in note.message and why in note.message
    assert "evaluates the whole set" in note.message


@pytest.mark.parametrize("source, why", [
    ("trainloader = torch.utils.data.DataLoader(ds, batch_size=8)", "its name"),
    ("loader = torch.utils.data.DataLoader(datasets.MNIST(root, train=True), batch_size=8)\n"
     "other = torch.utils.data.DataLoader(ds2, batch_size=8)", "its dataset"),
    ("loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)\nother = torch.utils.data.DataLoader(ds2)", "it shuffles"),
    ("loader = torch.utils.data.DataLoader(ds, batch_size=8)\nother = torch.utils.data.DataLoader(ds2)\n"
     "for x in loader:\n    x.sum().backward()\n", "how the script uses it"),
    ("loader = torch.utils.data.DataLoader(ds, batch_size=8)", "the file's only loader"),
    ("loader = torch.utils.data.DataLoader(ds, batch_size=8)\nval_loader = torch.utils.data.DataLoader(ds2)",
     "beside the file's validation loaders"),
])
def test_what_tells_a_training_loader(source, why):
    out, changes = shard(f"import torch\n{source}\n")
    [insert] = rows(changes, operation=Operation.INSERT)
    assert why in insert.message
    assert out.count("DistributedSampler(") == 1


def test_a_dataset_named_by_a_variable_is_read_where_it_is_bound():
    out, _ = shard("""\
        import torch
        dataset1 = datasets.MNIST('../data', train=True)
        dataset2 = datasets.MNIST('../data', train=False)
        loader_a = torch.utils.data.DataLoader(dataset1, batch_size=8)
        loader_b = torch.utils.data.DataLoader(dataset2, batch_size=8)
        """)
    assert "DistributedSampler(dataset1" in out and "DistributedSampler(dataset2" not in out


def test_loaders_nothing_tells_apart_are_left_whole_with_a_row():
    source = "import torch\na = torch.utils.data.DataLoader(ds1, batch_size=8)\nb = torch.utils.data.DataLoader(ds2, batch_size=8)\n"
    out, changes = shard(source)
    assert out == source
    assert len(rows(changes, operation=Operation.NOTE)) == 2
    assert all("nothing says whether it trains" in c.message for c in changes)


def test_a_tuple_of_loaders_gets_a_sampler_for_its_training_one():
    out, changes = shard("""\
        import torch
        train_loader, val_loader = torch.utils.data.DataLoader(a, shuffle=True), torch.utils.data.DataLoader(b)
        """)
    assert out.splitlines()[1].startswith("train_sampler = torch.utils.data.distributed.DistributedSampler(a,")
    assert "DataLoader(a, shuffle=(train_sampler is None), sampler=train_sampler), torch.utils.data.DataLoader(b)" in out
    assert [c.message.split(":")[0] for c in rows(changes, operation=Operation.NOTE)][0] == "val_loader"


def test_a_dict_of_loaders_gets_a_sampler_for_its_training_key():
    out, changes = shard("""\
        import torch
        loaders = {"train": torch.utils.data.DataLoader(a, shuffle=True), "val": torch.utils.data.DataLoader(b)}
        """)
    assert out.splitlines()[1].startswith("train_sampler = ")
    assert '"val": torch.utils.data.DataLoader(b)}' in out
    assert 'loaders["val"]: a validation loader' in rows(changes, operation=Operation.NOTE)[0].message


def test_a_loader_kept_on_self_keeps_its_sampler_on_self():
    out, _ = shard("""\
        import torch
        class Trainer:
            def __init__(self, ds):
                self.train_loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        """)
    assert "        self.train_sampler = torch.utils.data.distributed.DistributedSampler(ds, shuffle=True) if WORLD_SIZE > 1 else None" in out
    assert "sampler=self.train_sampler)" in out


def test_a_loader_returned_by_a_function_is_named_for_what_it_returns():
    out, _ = shard("""\
        import torch
        def get_train_loader(ds):
            return torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        """)
    assert "    train_sampler = torch.utils.data.distributed.DistributedSampler(ds, shuffle=True) if WORLD_SIZE > 1 else None\n    return" in out


def test_new_names_keep_clear_of_the_files_own():
    out, _ = shard("""\
        import torch
        train_sampler = "a name the script uses"
        train_dataset = 3
        train_loader = torch.utils.data.DataLoader(make(train_dataset), shuffle=True)
        """)
    assert "train_dataset_2 = make(train_dataset)" in out
    assert "train_sampler_2 = torch.utils.data.distributed.DistributedSampler(train_dataset_2, shuffle=True)" in out


@pytest.mark.parametrize("source, why", [
    ("make = lambda ds: torch.utils.data.DataLoader(ds, shuffle=True)", "lambda"),
    ("train_loader = torch.utils.data.DataLoader(ds, shuffle=True) if ok else None", "only on some condition"),
    ("x = 1; train_loader = torch.utils.data.DataLoader(ds, shuffle=True)", "shares a line"),
    ("loaders = [torch.utils.data.DataLoader(d, shuffle=True) for d in (train_set,)]", "comprehension"),
])
def test_a_training_loader_this_step_cannot_rewrite_in_place_is_left_with_a_row(source, why):
    source = f"import torch\n{source}\n"
    out, changes = shard(source)
    assert out == source
    [note] = rows(changes)
    assert note.operation == Operation.NOTE and why in note.message and "DistributedSampler" in note.message


def test_kwargs_spread_into_the_loader_keep_their_shuffle_and_batch_for_one_process():
    out, changes = shard("""\
        import torch
        train_kwargs = {'batch_size': 64}
        train_kwargs.update({'shuffle': True})
        train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
        """)
    assert ('train_sampler = torch.utils.data.distributed.DistributedSampler(dataset1, shuffle=train_kwargs.get("shuffle", False))'
            ' if WORLD_SIZE > 1 else None') in out
    assert ('DataLoader(dataset1, **dict(train_kwargs, shuffle=train_kwargs.get("shuffle", False) and train_sampler is None, '
            'batch_size=train_kwargs["batch_size"] // WORLD_SIZE), sampler=train_sampler)') in out
    assert rows(changes, "TP206", Operation.MODIFY)


def test_import_torch_is_added_where_the_file_lacks_it():
    out, _ = shard("import torch.nn as nn\nfrom torch.utils.data import DataLoader\ntrain_loader = DataLoader(ds, shuffle=True)\n")
    assert out.splitlines()[:3] == ["import torch.nn as nn", "import torch", "from torch.utils.data import DataLoader"]


def test_the_step_run_on_its_own_output_changes_nothing():
    once, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        for epoch in range(3):
            train(train_loader)
        """)
    assert shard_loaders(once, None, Options())[0] == once


def test_a_file_without_loaders_or_epoch_loops_is_unchanged_with_a_note():
    source = "import torch\nmodel = torch.nn.Linear(2, 2)\n"
    out, changes = shard(source)
    assert out == source and [(c.code, c.operation) for c in changes] == [("TP202", Operation.NOTE)]


def _batches(source: str, world_size: int | None) -> list[list[int]]:
    """The batches of indices `train_loader` gives when `source` runs, with WORLD_SIZE bound (or not)."""
    scope = {} if world_size is None else {"WORLD_SIZE": world_size}
    exec(compile(source, "<loader>", "exec"), scope)
    return [batch.tolist() for batch in scope["train_loader"]]


@pytest.mark.parametrize("shuffle", ["True", "False"])
def test_without_a_launcher_the_loader_reads_exactly_what_it_read_before(shuffle):
    source = textwrap.dedent(f"""\
        import torch
        from torch.utils.data import DataLoader
        torch.manual_seed(0)
        train_loader = DataLoader(list(range(20)), batch_size=6, shuffle={shuffle})
        """)
    out, _ = shard_loaders(source, None, Options())
    assert "train_dataset = list(range(20))" in out
    assert _batches(out, world_size=1) == _batches(source, world_size=None)


def test_through_the_driver_rows_land_on_the_lines_of_the_file_as_read():
    source = "import torch\n\n\ntrain_loader = torch.utils.data.DataLoader(ds, shuffle=True)\nfor epoch in range(2):\n    pass\n"
    result = distribute_source(source, "train.py", Options(entry=True))
    assert "train_sampler.set_epoch(epoch)" in result.source
    assert [(f.start_line, f.code, f.operation) for f in result.findings if f.code == "TP202"] == [
        (4, "TP202", Operation.INSERT), (5, "TP202", Operation.INSERT)]


def test_torch_is_importable_here():  # (the exec'd sources above import it)
    assert torch.utils.data.distributed.DistributedSampler


def test_a_sampler_in_a_spread_dict_display_is_the_users_own():
    source = ("import torch\nkw = {'batch_size': 8, 'sampler': weighted}\n"
              "train_loader = torch.utils.data.DataLoader(ds, **kw)\n")
    out, changes = shard(source)
    assert out == source and "own sampler (in **kw)" in changes[0].message


@pytest.mark.parametrize("source, why", [
    ("train_loader = torch.utils.data.DataLoader(*loader_args, shuffle=True)", "its dataset is not given"),
    ("train_loader = torch.utils.data.DataLoader(ds, *rest, shuffle=True)", "spread from a sequence"),
    ("loaders = {x: torch.utils.data.DataLoader(sets[x], **kw) for x in ['train', 'val']}", "**kwargs"),
])
def test_arguments_this_step_cannot_place_leave_the_loader_whole(source, why):
    source = f"import torch\n{source}\n"
    out, changes = shard(source)
    assert out == source and why in changes[0].message


def test_an_iterable_dataset_of_the_files_own_is_left_whole_with_a_row():
    source = textwrap.dedent("""\
        import torch
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                yield from range(10)
        stream = Stream()
        train_loader = DataLoader(stream, batch_size=4)
        """)
    out, changes = shard_loaders(source, None, Options())
    assert out == source and "IterableDataset" in changes[0].message


def test_a_trainer_without_any_loader_is_told_that_each_process_reads_all_its_data():
    """(pytorch/examples' word_language_model batches a tensor by hand: wrapped in DDP, each
    process would train on the whole corpus, silently)"""
    out, changes = shard("""\
        import torch
        train_data = batchify(corpus.train, 20)
        for i in range(0, train_data.size(0) - 1, 35):
            loss = model(train_data[i:i + 35]).sum()
            loss.backward()
            optimizer.step()
        """)
    [note] = rows(changes, operation=Operation.NOTE)
    assert "no DataLoader" in note.message and "RANK::WORLD_SIZE" in note.message
    assert out.startswith("import torch\ntrain_data = batchify(corpus.train, 20)\n")
