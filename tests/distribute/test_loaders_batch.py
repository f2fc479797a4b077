"""The batch across processes: by default the global batch is kept (each process takes
batch // WORLD_SIZE); --distributed-batch per-rank keeps the batch and scales the learning rate."""

from __future__ import annotations

import textwrap

import pytest

from torchport.distribute import Options
from torchport.distribute.loaders import shard_loaders
from torchport.findings import Operation


def shard(source: str, batch: str = "global"):
    return shard_loaders(textwrap.dedent(source), None, Options(batch=batch))


def batch_rows(changes, operation=None):
    return [c for c in changes if c.code == "TP206" and (operation is None or c.operation == operation)]


@pytest.mark.parametrize("given, split", [
    ("batch_size=64", "batch_size=64 // WORLD_SIZE"),
    ("batch_size=args.batch_size", "batch_size=args.batch_size // WORLD_SIZE"),
    ("batch_size=cfg['bs']", "batch_size=cfg['bs'] // WORLD_SIZE"),
    ("batch_size=a * b", "batch_size=(a * b) // WORLD_SIZE"),
    ("batch_size=(a + b)", "batch_size=(a + b) // WORLD_SIZE"),
])
def test_the_global_batch_is_split_across_the_processes(given, split):
    out, changes = shard(f"import torch\ntrain_loader = torch.utils.data.DataLoader(ds, {given}, shuffle=True)\n")
    assert f"DataLoader(ds, {split}, shuffle=" in out
    [row] = batch_rows(changes)
    assert row.operation == Operation.MODIFY and "global batch stays" in row.message and row.start_line == 2


@pytest.mark.parametrize("given, said", [("", "no batch_size"), (", batch_size=None", "batch_size=None")])
def test_a_loader_without_a_batch_to_split_keeps_it_and_says_so(given, said):
    out, changes = shard(f"import torch\ntrain_loader = torch.utils.data.DataLoader(ds{given}, shuffle=True)\n")
    assert "WORLD_SIZE," not in out.splitlines()[-1] and "// WORLD_SIZE" not in out
    [row] = batch_rows(changes)
    assert row.operation == Operation.NOTE and said in row.message


def test_validation_loaders_and_users_samplers_keep_their_batch():
    source = ("import torch\nval_loader = torch.utils.data.DataLoader(val_set, batch_size=64)\n"
              "train_loader = torch.utils.data.DataLoader(ds, batch_size=64, sampler=my_sampler)\n")
    out, changes = shard(source)
    assert out == source and not batch_rows(changes)


def test_per_rank_keeps_the_batch_and_scales_the_keyword_lr():
    out, changes = shard("""\
        import torch
        train_loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        """, batch="per-rank")
    assert "batch_size=64," in out
    assert "optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * WORLD_SIZE, momentum=0.9)" in out
    kept, scaled = batch_rows(changes)
    assert kept.operation == Operation.NOTE and "kept on each process" in kept.message
    assert scaled.operation == Operation.MODIFY and scaled.start_line == 3 and "per-rank" in scaled.message


@pytest.mark.parametrize("imports, made, scaled", [
    ("import torch", "torch.optim.Adam(params, 1e-3)", "torch.optim.Adam(params, 1e-3 * WORLD_SIZE)"),
    ("from torch import optim", "optim.AdamW(params, lr=0.1 * k)", "optim.AdamW(params, lr=(0.1 * k) * WORLD_SIZE)"),
    ("from torch.optim import SGD", "SGD(params, base_lr, 0.9)", "SGD(params, base_lr * WORLD_SIZE, 0.9)"),
    ("import torch.optim as opt", "opt.sgd.SGD(params, lr=cfg.lr)", "opt.sgd.SGD(params, lr=cfg.lr * WORLD_SIZE)"),
])
def test_per_rank_scales_the_lr_of_each_torch_optimizer_spelling(imports, made, scaled):
    out, _ = shard(f"{imports}\noptimizer = {made}\n", batch="per-rank")
    assert f"optimizer = {scaled}" in out


def test_per_rank_leaves_other_optimizers_and_says_where_no_torch_one_is_made():
    source = "import transformers\noptimizer = transformers.AdamW(params, lr=1e-4)\n"
    out, changes = shard(source, batch="per-rank")
    assert out == source
    [row] = batch_rows(changes)
    assert row.operation == Operation.NOTE and "no torch.optim optimizer" in row.message


def test_per_rank_says_what_it_does_not_scale():
    out, changes = shard("""\
        import torch
        optimizer = torch.optim.SGD([{"params": a, "lr": 0.01}, {"params": b}], lr=0.1)
        fallback = torch.optim.Adam(params)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=100)
        for group in optimizer.param_groups:
            group["lr"] = 0.1 * 0.5
        """, batch="per-rank")
    assert "lr=0.1 * WORLD_SIZE)" in out and "max_lr=0.1," in out and '"lr": 0.01' in out
    messages = {c.start_line: c.message for c in batch_rows(changes)}
    assert "per-group rates" in messages[2] and "0.01" in messages[2]
    assert "default learning rate" in messages[3]
    assert "max_lr=0.1" in messages[4] and "not scaled" in messages[4]
    assert "not scaled" in messages[6]


def test_the_global_batch_leaves_the_lr_alone():
    out, _ = shard("import torch\noptimizer = torch.optim.SGD(params, lr=0.1)\n")
    assert "WORLD_SIZE" not in out
