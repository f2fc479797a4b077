"""What the steps share: a step reads the tree the step before it made (no parse, the untouched
nodes the same objects, lines as a parse would give them), and the loader step's scopes are the
ones LibCST's scope analysis gives."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from torchport.distribute.edits import Edits, Read, statements
from torchport.distribute.loader_sites import Facts, site_of, value_bound
from torchport.layout import Layout

SCRIPT = "import torch\n\n\ndef train(model):\n    for x in data:\n        model(x).sum().backward()\n\n\ntrain(net)\n"


def _lines_of_a_parse(text: str) -> list[tuple[int, int]]:
    """The lines of each top-level statement, as LibCST gives them on a parse of `text`."""
    module = cst.parse_module(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return [(positions[s].start.line, positions[s].end.line) for s in module.body]


def _lines(found: Read) -> list[tuple[int, int]]:
    return [(found.line(s), found.end_line(s)) for s in found.module.body]


def test_the_next_step_reads_the_tree_the_edits_made():
    found = Read.of(SCRIPT)
    function = found.module.body[1]
    edits = Edits()
    edits.insert_before(function, statements("RANK = 0\n"))
    text = edits.apply(found)
    after = Read.of(text)
    assert after.module.code == text
    assert after.module.body[2].body is function.body  # (untouched: the same object, not a parse of it)
    assert _lines(after) == _lines_of_a_parse(text)


def test_a_tree_that_holds_a_node_twice_is_parsed_again():
    found = Read.of(SCRIPT)
    call = found.module.body[-1]
    edits = Edits()
    edits.insert_after(call, [call])  # (the same statement object twice)
    text = edits.apply(found)
    after = Read.of(text)
    assert after.module.body[-1] is not after.module.body[-2]
    assert _lines(after) == _lines_of_a_parse(text)


IMPORTS = "import torch\nimport torch.multiprocessing as mp\n\n\ndef train(model):\n    mp.spawn(model)\n\n\ntrain(net)\n"


def _spawn_call(found: Read) -> cst.Call:
    return next(n for n in found.layout.order if isinstance(n, cst.Call) and found.is_api(n.func, {"torch.multiprocessing.spawn"}))


@pytest.mark.parametrize(("edit", "kept"), [
    (lambda m, e: e.insert_before(m.body[2], statements("RANK = 0\n")), True),
    (lambda m, e: e.insert_after(m.body[2].body.body[0], statements("model = model.module\n")), True),
    (lambda m, e: e.insert_before(m.body[2], statements("import os\n")), False),  # (an import)
    (lambda m, e: e.insert_before(m.body[2].body.body[0], statements("mp = None\n")), False),  # (a name of the table bound)
    (lambda m, e: e.insert_before(m.body[2], statements("cuda = torch.cuda\n")), False),  # (an alias)
    (lambda m, e: e.remove(m.body[0]), False),  # (an import taken out)
])
def test_the_next_step_reads_the_import_table_again_only_where_the_edits_touch_it(edit, kept):
    found = Read.of(IMPORTS)
    assert _spawn_call(found) is not None  # (the table is read)
    edits = Edits()
    edit(found.module, edits)
    after = Read.of(edits.apply(found))
    assert (after._imports is found._imports) is kept
    fresh = Read(after.text)
    for node in after.layout.order:
        if isinstance(node, (cst.Name, cst.Attribute)):
            assert after.qualified(node) == fresh.qualified(fresh.layout.order[after.layout.order.index(node)])


SCOPES = """import torch
from torch.utils.data import DataLoader
batch = 8
loader = DataLoader(data, batch_size=batch)
class Trainer:
    size = 4
    def fit(self):
        self.loader = DataLoader(data, batch_size=self.size)
        return [DataLoader(d) for d in make(DataLoader(data))]
def main():
    global batch
    batch = 16
    def inner():
        return DataLoader(data, batch_size=batch)
    f = lambda: DataLoader(data)
    splits = {k: DataLoader(ds[k], batch_size=batch) for k in ["train", "val"]}
"""


def _libcst_scope_node(scope, module):
    return module if isinstance(scope, GlobalScope) else scope.node


def test_the_scopes_are_libcsts():
    found = Read.of(SCOPES)
    facts = Facts.read(found)
    scopes = MetadataWrapper(found.module, unsafe_skip_copy=True).resolve(ScopeProvider)
    nodes = [*facts.calls, *facts.assigns, *facts.loops,
             *(n for n in found.layout.lines if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Return)))]
    assert len(facts.calls) == 8
    for node in nodes:
        assert facts.scope(node) is _libcst_scope_node(scopes[node], found.module), found.module.code_for_node(node)


@pytest.mark.parametrize("loader, bound", [
    ("DataLoader(data, batch_size=batch)", "16"),  # (the module's last: main's `global batch` makes its 16 the module's)
    ("DataLoader(ds[k], batch_size=batch)", None),  # (in a comprehension: its own scope binds no batch)
])
def test_a_value_is_the_last_bound_in_the_scope_of_the_loader(loader, bound):
    facts = Facts.read(Read.of(SCOPES))
    call = next(c for c in facts.loaders if cst.Module([]).code_for_node(c) == loader)
    value = value_bound("batch", site_of(call, facts), facts)
    assert (value if value is None else cst.Module([]).code_for_node(value)) == bound


def _old_walk(node: cst.CSTNode, into_scopes: bool) -> list[cst.CSTNode]:
    """A walk by LibCST's own children, not into nested scopes unless asked."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if into_scopes or current is node or not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(reversed(current.children))
    return found


def test_a_walk_of_a_statement_read_from_the_layout_is_a_walk_of_its_children():
    from torchport.distribute.edits import nodes, walk

    found = Read.of("class Net:\n    def forward(self, x):\n        g = lambda y: y + 1\n        return g(x)\n\n\n"
                    "for x in data:\n    def step():\n        return f(x)\n    h = lambda: step()\n    print(h(), f(x))\n")
    found.layout  # (laid out: walks of its statements read its order)
    for statement in found.layout.order:
        if found.layout.extent(statement) is None:
            continue
        for into_scopes in (True, False):
            assert list(walk(statement, into_scopes)) == _old_walk(statement, into_scopes)
            assert list(nodes(statement, cst.Call, cst.Name, into_scopes=into_scopes)) == [
                n for n in _old_walk(statement, into_scopes) if isinstance(n, (cst.Call, cst.Name))]


ONE_CARD = """import torch


def main(args):
    model = Net().cuda()
    model = torch.nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x).sum().backward()
        optimizer.step()
    torch.save(model.state_dict(), "m.pt")
    print(model.fc, model.conv)


if __name__ == "__main__":
    main(args)
"""
SPAWNED = """import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, ngpus, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", world_size=ngpus, rank=gpu)
    model = torch.nn.parallel.DistributedDataParallel(Net().cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(2, args))
"""


@pytest.mark.parametrize(("source", "steps"), [(ONE_CARD, 3), (SPAWNED, 1)], ids=["one card", "spawn"])
def test_no_step_makes_a_tree_that_holds_a_node_twice(source, steps):
    """Each step's made tree is the next step's (a tree holding a node twice, such as two of
    LibCST's default `Dot`, would be parsed again)."""
    from torchport.distribute import detect, spawn
    from torchport.distribute.driver import STEPS, Options

    plan = detect.read(Read.of(source), Options())
    text, changed = source, []
    for step in STEPS:
        if not plan.single_card and step is not spawn.launch_in_place:
            continue  # (as the driver runs them)
        new, changes = step(text, plan, Options())
        if new != text:
            changed.append(step.__name__)
            assert Read.tree_made(new), step.__name__
        text = new
    assert len(changed) == steps


@pytest.mark.parametrize(("source", "held"), [(ONE_CARD, True), (SPAWNED, True), ("import torch\nx = torch.ones(2)\n", False)],
                         ids=["changed", "distributed already", "trains nothing (read with ast)"])
def test_the_steps_hand_the_migration_the_tree_of_what_they_wrote(source, held):
    from torchport.distribute.driver import distribute_source

    done = distribute_source(source)
    assert (done.laid_out is not None) == held
    if held:
        assert done.laid_out.code == done.source == done.laid_out.module.code
        assert not Layout(done.laid_out.module).shared  # (each node held once: the migration's scope analysis copies nothing)
