"""set_epoch(epoch) first in the epoch loop, guarded so that a run without a launcher never calls it."""

from __future__ import annotations

import textwrap

import pytest

from torchport.distribute import Options
from torchport.distribute.loaders import shard_loaders
from torchport.findings import Operation

GUARD = "if train_sampler is not None:"
ISINSTANCE = "if isinstance({0}.sampler, torch.utils.data.distributed.DistributedSampler):"


def shard(source: str):
    return shard_loaders(textwrap.dedent(source), None, Options())


def lines_after(out: str, header: str, count: int = 2) -> list[str]:
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(header))
    return [line.strip() for line in lines[at + 1:at + 1 + count]]


@pytest.mark.parametrize("header, var", [
    ("for epoch in range(10):", "epoch"),
    ("for epoch in tqdm(range(start_epoch, n_epochs)):", "epoch"),
    ("for epoch in range(1, args.epochs + 1):", "epoch"),
    ("for ep in range(cfg.max_epoch):", "ep"),
    ("for cur_epoch in range(3):", "cur_epoch"),
    ("for i, epoch in enumerate(schedule):", "epoch"),
    ("for epoch in args.epoch:", "epoch"),
])
def test_set_epoch_comes_first_in_each_spelling_of_an_epoch_loop(header, var):
    out, changes = shard(f"""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        {header}
            train(train_loader)
        """)
    assert lines_after(out, header, 3) == [GUARD, f"train_sampler.set_epoch({var})", "train(train_loader)"]
    [row] = [c for c in changes if "set_epoch" in c.message and c.operation == Operation.INSERT]
    assert row.start_line == 3


@pytest.mark.parametrize("header", ["for step in range(10):", "for e in events:", "for batch in train_loader:"])
def test_a_loop_that_is_not_over_epochs_gets_nothing(header):
    out, _ = shard(f"""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        {header}
            train(train_loader)
        """)
    assert "set_epoch" not in out


def test_a_one_line_loop_body_becomes_a_block():
    out, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
        for epoch in range(3): train(train_loader); log(epoch)
        """)
    assert out.splitlines()[-4:] == ["for epoch in range(3):", f"    {GUARD}", "        train_sampler.set_epoch(epoch)",
                                     "    train(train_loader); log(epoch)"]


def test_a_module_level_sampler_is_seen_from_a_functions_loop():
    out, _ = shard("""\
        import torch
        def fit(model, epochs):
            for epoch in range(epochs):
                train(model)
        if __name__ == "__main__":
            train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
            fit(model, 3)
        """)
    assert lines_after(out, "for epoch") == [GUARD, "train_sampler.set_epoch(epoch)"]


def test_a_loop_before_the_loader_in_the_same_function_does_not_read_its_sampler():
    out, changes = shard("""\
        import torch
        def main():
            for epoch in range(2):
                warm_up()
            train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
        """)
    assert "set_epoch" not in out
    assert any("no epoch loop" in c.message for c in changes)


def test_a_loader_made_in_another_function_is_reached_through_its_own_sampler():
    out, _ = shard("""\
        import torch
        def loaders():
            train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
            return train_loader
        def main():
            train_loader = loaders()
            for epoch in range(3):
                for x in train_loader:
                    step(x)
        """)
    assert lines_after(out, "for epoch") == [ISINSTANCE.format("train_loader"), "train_loader.sampler.set_epoch(epoch)"]


def test_a_loader_passed_as_a_parameter_is_reached_through_its_own_sampler():
    out, _ = shard("""\
        import torch
        def train(model, data_loader, val_loader):
            for epoch in range(3):
                model.train()
        def main():
            train(model, torch.utils.data.DataLoader(ds, shuffle=True), val_loader)
        """)
    assert lines_after(out, "for epoch") == [ISINSTANCE.format("data_loader"), "data_loader.sampler.set_epoch(epoch)"]


def test_a_loader_made_anew_each_epoch_gets_set_epoch_right_after_its_sampler():
    out, _ = shard("""\
        import torch
        for epoch in range(3):
            train_loader = torch.utils.data.DataLoader(subset(epoch), shuffle=True)
            train(train_loader)
        """)
    assert [line.strip() for line in out.splitlines()[2:7]] == [
        "train_dataset = subset(epoch)",
        "train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=True) if WORLD_SIZE > 1 else None",
        GUARD, "train_sampler.set_epoch(epoch)", out.splitlines()[6].strip()]
    assert out.count("set_epoch") == 1


def test_only_the_outer_of_two_nested_epoch_loops_gets_it():
    out, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
        for epoch in range(3):
            for sub_epoch in range(2):
                train(train_loader)
        """)
    assert out.count("set_epoch") == 1 and lines_after(out, "for epoch") == [GUARD, "train_sampler.set_epoch(epoch)"]


def test_every_epoch_loop_that_sees_the_sampler_gets_it():
    out, _ = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
        for epoch in range(3):
            pretrain(train_loader)
        for epoch in range(3):
            finetune(train_loader)
        """)
    assert out.count("train_sampler.set_epoch(epoch)") == 2


def test_a_method_of_the_class_that_made_the_loader_reads_the_sampler_from_self():
    out, _ = shard("""\
        import torch
        class Trainer:
            def __init__(self, ds):
                self.train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
            def fit(self):
                for epoch in range(self.epochs):
                    self.one_epoch()
        """)
    assert lines_after(out, "for epoch") == ["if self.train_sampler is not None:", "self.train_sampler.set_epoch(epoch)"]


def test_a_file_whose_loaders_all_validate_gets_no_set_epoch():
    out, _ = shard("""\
        import torch
        val_loader = torch.utils.data.DataLoader(ds)
        def train(model, train_loader):
            for epoch in range(3):
                model.train()
        """)
    assert "set_epoch" not in out


def test_no_epoch_loop_for_a_shuffling_sampler_is_said_and_for_an_ordered_one_not():
    _, shuffling = shard("import torch\ntrain_loader = torch.utils.data.DataLoader(ds, shuffle=True)\n")
    _, ordered = shard("import torch\ntrain_loader = torch.utils.data.DataLoader(ds)\n")
    assert [c.operation for c in shuffling if "no epoch loop" in c.message] == [Operation.NOTE]
    assert not [c for c in ordered if "no epoch loop" in c.message]


def test_a_sampler_made_on_one_branch_only_is_reached_through_the_loaders_own():
    out, _ = shard("""\
        import torch
        def main():
            if args.small:
                train_loader = torch.utils.data.DataLoader(small_set, shuffle=True)
            else:
                train_loader = torch.utils.data.DataLoader(big_set, sampler=weighted)
            for epoch in range(3):
                for x in train_loader:
                    step(x)
        """)
    assert lines_after(out, "for epoch") == [ISINSTANCE.format("train_loader"), "train_loader.sampler.set_epoch(epoch)"]


def test_loaders_bound_to_one_name_on_two_branches_share_one_sampler_name():
    out, _ = shard("""\
        import torch
        if args.small:
            train_loader = torch.utils.data.DataLoader(small_set, shuffle=True)
        else:
            train_loader = torch.utils.data.DataLoader(big_set, shuffle=True)
        """)
    assert out.count("train_sampler = ") == 2 and "train_sampler_2" not in out


def test_a_sampler_made_under_the_main_guard_is_seen_from_the_functions_it_calls():
    out, _ = shard("""\
        import torch
        def fit():
            for epoch in range(3):
                train()
        if __name__ == '__main__':
            train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
            fit()
        """)
    assert lines_after(out, "for epoch") == [GUARD, "train_sampler.set_epoch(epoch)"]


@pytest.mark.parametrize("name", ["dataloaders", "train_loader_iter", "len_train_loader", "num_loader_steps"])
def test_a_name_that_holds_no_loader_gets_no_sampler_read(name):
    out, _ = shard(f"""\
        import torch
        def main():
            train_loader = torch.utils.data.DataLoader(ds, shuffle=True)
            return train_loader
        def fit({name}):
            for epoch in range(3):
                use({name})
        """)
    assert "set_epoch" not in out
