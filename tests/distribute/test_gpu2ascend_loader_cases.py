"""msFmkTransplt's five DataLoaderRule cases (Ascend-mstt,
msfmktransplt/test/msFmkTransplt/testCases/test_rules.py, test_dataloader_rule), met by meaning
through `distribute_source` (a sampler on the training loaders, set_epoch in the epoch loop).

Where torchport differs on purpose, the case says why: msFmkTransplt replaces a user's sampler and
puts a DistributedSampler on validation loaders too, forces shuffle=False, pin_memory=True and
drop_last=True; torchport keeps the user's sampler, leaves validation whole (each process then
evaluates the whole set: the same figures on every rank), moves the shuffle into the sampler and
adds no other argument, so that a run without a launcher reads its data exactly as before.
"""

from __future__ import annotations

import libcst as cst

from torchport.distribute import Options, distribute_source
from torchport.findings import Operation

SAMPLER = "torch.utils.data.distributed.DistributedSampler"


def distribute(source: str):
    return distribute_source(source, "case.py", Options(entry=True))


def loader_call(source: str, target: str) -> cst.Call:
    """The DataLoader call bound to `target` in `source` (the last such binding)."""
    found = []

    class Find(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if cst.Module([]).code_for_node(node.targets[0].target) == target:
                found.append(node.value)

    cst.parse_module(source).visit(Find())
    return found[-1]


def keyword(call: cst.Call, name: str) -> str | None:
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    return None if arg is None else cst.Module([]).code_for_node(arg.value)


def test_case_1_a_shuffling_training_loader_gets_a_sampler_and_its_epoch_loop_set_epoch():
    source = '''from torch.utils import data

trainset = ICDAR15(args.train_data,args.train_gt)
train_loader_target = data.DataLoader(trainset, batch_size=args.batch_size,
                                      shuffle=True, num_workers=args.num_workers, 
                                      drop_last=True)
f_score = 0.5
for epoch in range(args.epoch_iter):
    train(epoch, model, optimizer,train_loader_target,criterion)
'''
    result = distribute(source)
    call = loader_call(result.source, "train_loader_target")
    sampler = keyword(call, "sampler")
    assert f"train_sampler_target = {SAMPLER}(trainset, shuffle=True) if WORLD_SIZE > 1 else None" in result.source
    assert sampler == "train_sampler_target" and keyword(call, "shuffle") == "(train_sampler_target is None)"
    loop = result.source.split("for epoch in range(args.epoch_iter):\n")[1].splitlines()
    assert loop[:2] == ["    if train_sampler_target is not None:", "        train_sampler_target.set_epoch(epoch)"]
    assert {(f.start_line, f.operation) for f in result.findings if f.code == "TP202"} == {(4, Operation.INSERT), (8, Operation.INSERT)}


def test_case_2_a_loader_given_as_a_parameter_gets_set_epoch_through_its_sampler():
    # msFmkTransplt tests isinstance(data_loader, DataLoader) and then calls data_loader.sampler.set_epoch,
    # which fails for a loader without a DistributedSampler (a run without a launcher); torchport tests the sampler.
    source = '''from torch.utils import data

def train(data_loader):
    for epoch in args.epoch:
        model.train()
'''
    result = distribute(source)
    assert result.source.split("    for epoch in args.epoch:\n")[1].splitlines()[:3] == [
        f"        if isinstance(data_loader.sampler, {SAMPLER}):",
        "            data_loader.sampler.set_epoch(epoch)",
        "        model.train()",
    ]


def test_case_3_a_users_own_sampler_is_kept_and_said_where_msfmktransplt_replaces_it():
    # Deliberately different: the user's sampler says how to draw the data (weights, order,
    # subsets); replacing it changes what the script trains on. The row tells the user to shard it.
    source = '''from torch.utils.data.dataloader import DataLoader
dataloader = None
dataloader = DataLoader(train_data, sampler=train_sampler, 
                        batch_size=args.train_batch_size)
'''
    result = distribute(source)
    assert keyword(loader_call(result.source, "dataloader"), "sampler") == "train_sampler"
    [row] = [f for f in result.findings if f.code == "TP202"]
    assert (row.start_line, row.operation) == (3, Operation.NOTE) and "own sampler" in row.message


def test_case_4_a_dict_of_splits_gets_a_sampler_for_its_training_split_only():
    # msFmkTransplt gives every split a DistributedSampler (the validation split too) and then
    # set_epoch on every loader's sampler; torchport samples the training split alone.
    source = '''import torch

dataloaders = {
        x: torch.utils.data.DataLoader(face_dataset[x], batch_size=batch_size, shuffle=False,
                                       num_workers=num_workers)
        for x in ['train', 'valid']}

for epoch in epochs:
    pass
'''
    result = distribute(source)
    assert (f"samplers = {{x: {SAMPLER}(face_dataset[x], shuffle=False) if WORLD_SIZE > 1 and x == 'train' else None "
            "for x in ['train', 'valid']}") in result.source
    assert keyword(_comp_loader(result.source), "sampler") == "samplers[x]"
    loop = result.source.split("for epoch in epochs:\n")[1].splitlines()
    assert loop[:3] == ["    if samplers['train'] is not None:", "        samplers['train'].set_epoch(epoch)", "    pass"]


def _comp_loader(source: str) -> cst.Call:
    comp = loader_call(source, "dataloaders")
    assert isinstance(comp, cst.DictComp)
    return comp.value


def test_case_5_a_validation_loader_is_left_whole_where_msfmktransplt_samples_it():
    # Deliberately different: a sampled validation set gives each rank a different part, so each
    # rank's accuracy is of a part (and DistributedSampler pads with repeats); left whole, every
    # process evaluates the whole set and prints the single-card figure.
    source = '''import torch

val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(valdir, val_transforms),
        batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True)
'''
    result = distribute(source)
    assert SAMPLER not in result.source
    assert cst.Module([]).code_for_node(loader_call(result.source, "val_loader")) == cst.Module([]).code_for_node(
        loader_call(source, "val_loader"))
    [row] = [f for f in result.findings if f.code == "TP202"]
    assert (row.start_line, row.operation) == (3, Operation.NOTE) and "validation" in row.message
