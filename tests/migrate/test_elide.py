"""Setting CUDA-free definitions aside before LibCST must never change what a migration gives."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from _ported import PORTED

from torchport import targets
from torchport.migrate.device_indices import mentions_of
from torchport.migrate.elide import MARKER, elide
from torchport.import_table import ImportTable
from torchport.migrate.rules.base.rules_pass import RulesPass
from torchport.migrate.source import MENTIONS_CUDA, Reading, _migrate, _read, migrate_source

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "examples"

MIXED = b'''"""A module where most code never touches the device."""
import os

import torch
from torch.cuda import amp

start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)


def parse_args():
    return os.environ.get("ARGS", "")


@staticmethod
@property
def decorated(x,
              y):
    return x + y


class Model(torch.nn.Module):
    """Only one method mentions the device."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.layer(x)

    def to_device(self):
        return self.cuda()


class Plain:
    def method(self):
        return 1


def timed(fn):
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def scaled(loss):
    with amp.autocast():
        return loss * 2


def main():
    x = torch.randn(4, device="cuda")
    return parse_args(), x
'''


def _inputs():
    cases = [("mixed", MIXED), ("mixed_crlf", MIXED.replace(b"\n", b"\r\n")), ("no_final_newline", MIXED.rstrip(b"\n"))]
    cases += [(p.name, p.read_bytes()) for p in sorted((HERE / "golden").glob("*.py"))]
    cases += [(p.name, p.read_bytes()) for p in sorted(EXAMPLES.glob("*/*.py"))]
    return cases


def _whole(source: bytes, target: str = "cpu") -> Reading:
    """What migrate_source reads of a file for `target`, with nothing set aside (and every line counted in one print)."""
    reading = _read(source, MENTIONS_CUDA, targets.get(target).device_function is not None)
    return replace(reading, elision=None, imports=ImportTable.of(source), statement_lines=None)


def _indices(source: bytes) -> frozenset[str]:
    return _whole(source).indices


def _rows(result):
    return [(f.start_line, f.end_line, f.code, f.operation, f.message, f.api) for f in result.findings]


@pytest.mark.parametrize("target", PORTED)
@pytest.mark.parametrize(("name", "source"), _inputs(), ids=[name for name, _ in _inputs()])
def test_migrating_with_definitions_set_aside_gives_the_whole_file_result(name, source, target):
    whole = _migrate(source, targets.get(target), name, _whole(source, target))
    fast = migrate_source(source, targets.get(target), name)
    assert fast.source == whole.source
    assert _rows(fast) == _rows(whole)
    assert fast.error == whole.error


def test_cuda_free_definitions_become_one_line_stand_ins_that_bind_the_same_name():
    elision = elide(MIXED, MENTIONS_CUDA)
    reduced = elision.reduced.decode()
    assert f"def parse_args(): pass  # {MARKER.decode()} 0\n" in reduced
    assert f"def decorated(): pass  # {MARKER.decode()} 1\n" in reduced
    assert "    def __init__(): pass" in reduced and "    def forward(): pass" in reduced
    assert "class Plain: pass" in reduced
    assert "def to_device(self):\n        return self.cuda()" in reduced
    assert "return os.environ" not in reduced and "@staticmethod" not in reduced
    assert elision.restore(elision.reduced) == MIXED


def test_definitions_that_use_names_bound_by_cuda_code_are_kept():
    """`timed` uses module-level events and `scaled` an alias of torch.cuda.amp, without saying "cuda"."""
    reduced = elide(MIXED, MENTIONS_CUDA).reduced.decode()
    assert "return start.elapsed_time(end)" in reduced
    assert "with amp.autocast():" in reduced


def test_rows_keep_the_lines_of_the_original_file():
    result = migrate_source(MIXED, targets.get("cpu"), "mixed.py")
    lines = MIXED.decode().splitlines()
    device_row = next(f for f in result.findings if f.code == "TP001")
    assert 'device="cuda"' in lines[device_row.start_line - 1]
    cuda_row = next(f for f in result.findings if f.code == "TP003")
    assert "self.cuda()" in lines[cuda_row.start_line - 1]


def test_restore_refuses_output_where_a_stand_in_moved_or_changed():
    elision = elide(MIXED, MENTIONS_CUDA)
    assert elision.restore(elision.reduced.replace(b"def parse_args()", b"def parse_argz()")) is None
    assert elision.restore(elision.reduced + elision.stand_ins[0]) is None


@pytest.mark.parametrize(
    "source",
    [
        b"import torch\nx = torch.zeros(1).cuda()\n",  # nothing to set aside
        b"def f(:\n    pass\nx.cuda()\n",  # ast cannot read it: the whole-file path reports it
        b"def f():\n    return '" + MARKER + b"'\nx.cuda()\n",  # our marker already in the file
    ],
)
def test_nothing_is_set_aside_when_it_cannot_be_done_safely(source):
    assert elide(source, MENTIONS_CUDA) is None


def test_a_stand_in_that_cannot_be_put_back_means_the_whole_file_is_migrated(monkeypatch):
    from torchport.migrate import source as source_module

    class Unrestorable:
        reduced = MIXED

        def restore(self, migrated):
            return None

        span_firsts = ()

        def seen(self, tree):
            return tree, tuple(node.lineno for node in tree.body)

        def reduced_line(self, line):
            return line

        reduced_end_line = reduced_line

    monkeypatch.setattr(source_module, "elide_definitions", lambda *args: Unrestorable())
    result = migrate_source(MIXED, targets.get("cpu"), "mixed.py")
    whole = _migrate(MIXED, targets.get("cpu"), "mixed.py", _whole(MIXED))
    assert result.source == whole.source and _rows(result) == _rows(whole)
    assert b"return os.environ" in result.source


RANK_ACROSS_DEFINITIONS = b'''import os
import torch


class Trainer:
    def setup(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])

    def remember(self):
        self.gpu = self.local_rank

    def unrelated(self, x):
        return x * 2

    def train(self, model):
        return model.to(self.gpu)


def helper(values):
    return sorted(values)


def main():
    trainer = Trainer()
    trainer.train(torch.nn.Linear(2, 2).cuda())
'''


@pytest.mark.parametrize("target", PORTED)
def test_a_file_with_a_device_index_is_set_aside_too_but_never_what_carries_the_index(target):
    """What sets, copies or uses an index is kept, even where it mentions no CUDA (`remember`
    copies it, `train` uses it): the result equals the whole file's, with less parsed."""
    whole = _migrate(RANK_ACROSS_DEFINITIONS, targets.get(target), "t.py", _whole(RANK_ACROSS_DEFINITIONS, target))
    fast = migrate_source(RANK_ACROSS_DEFINITIONS, targets.get(target), "t.py")
    assert fast.source == whole.source and _rows(fast) == _rows(whole)
    kept = re.compile(MENTIONS_CUDA.pattern + b"|" + mentions_of(_indices(RANK_ACROSS_DEFINITIONS)))
    reduced = elide(RANK_ACROSS_DEFINITIONS, kept).reduced.decode()
    assert "def helper(): pass" in reduced and "def unrelated(): pass" in reduced
    assert "self.gpu = self.local_rank" in reduced and "return model.to(self.gpu)" in reduced
    assert "self.gpu" in _indices(RANK_ACROSS_DEFINITIONS)
    assert "model.to(self.gpu)" not in fast.source.decode()  # ported: the index names a device




SET_ASIDE = [(name, source) for name, source in _inputs() if elide(source, MENTIONS_CUDA) is not None]


@pytest.mark.parametrize(("name", "source"), SET_ASIDE, ids=[name for name, _ in SET_ASIDE])
def test_what_the_rules_read_of_the_reduced_source_is_had_without_parsing_it_again(name, source):
    """The reduced module's import table and its statements' lines, read from the original's
    tree, are those of the reduced source parsed anew."""
    import ast

    tree = ast.parse(source)
    elision = elide(source, MENTIONS_CUDA, tree)
    reparsed = ast.parse(elision.reduced)
    seen, lines = elision.seen(tree)
    assert tuple(lines) == tuple(node.lineno for node in reparsed.body)
    assert ImportTable.of_tree(seen) == ImportTable.of_tree(reparsed)
    assert [type(n) for n in seen.body] == [type(n) for n in reparsed.body]


# A loop that copies batches to the device in a function with no CUDA word and no training step
# of its own (set aside), called from one that trains: TP106's advice would be had there if the
# rules walked into it.
COPIES = b'''import torch


def run_epoch(model, loader, device, optimizer):
    for batch, target in loader:
        batch = batch.to(device)
        target = target.to(device)
        train_step(model, batch, target, optimizer)


async def fetch(queue):
    return await queue.get()


class Trainer:
    def describe(self):
        return "a trainer"

    def place(self, model):
        return model.cuda()


def train_step(model, batch, target, optimizer):
    loss = torch.nn.functional.cross_entropy(model(batch), target)
    loss.backward()
    optimizer.step()


def main(model, loader):
    device = torch.device("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run_epoch(model, loader, device, optimizer)
'''


def _tree_inputs():
    return [("copies", COPIES), *_inputs()]


@pytest.mark.parametrize("target", PORTED)
@pytest.mark.parametrize(("name", "source"), _tree_inputs(), ids=[name for name, _ in _tree_inputs()])
def test_a_tree_the_caller_holds_is_migrated_as_a_parse_of_the_file_would_be(name, source, target, monkeypatch):
    """--distributed hands the migration the layout of the tree its steps made: read whole, not
    parsed, walked in the layout's order, with the rules passing by what would be set aside and
    the rows' lines read in the layout, it gives what a parse of the file gives."""
    import libcst as cst

    from torchport.layout import Layout
    from torchport.migrate import source as source_module

    laid_out = Layout(cst.parse_module(source))
    parsed = migrate_source(source, targets.get(target), name)

    def no_parse_of_the_file(text, *args, **kwargs):  # (rules still parse snippets of their own)
        assert text != source, "the file parsed, with its tree at hand"
        return parse(text, *args, **kwargs)

    def no_rules_visit(self, visitor):
        assert not isinstance(visitor, RulesPass), "the rules visited the module, with its layout at hand"
        return visit(self, visitor)

    parse, visit = cst.parse_module, cst.Module.visit
    monkeypatch.setattr(source_module.cst, "parse_module", no_parse_of_the_file)
    monkeypatch.setattr(cst.Module, "visit", no_rules_visit)
    handed = migrate_source(source, targets.get(target), name, laid_out=laid_out)
    assert handed.source == parsed.source
    assert _rows(handed) == _rows(parsed)
    assert handed.error == parsed.error


def test_the_definitions_a_reduced_source_sets_aside_are_found_in_the_whole_tree():
    import libcst as cst

    elision = elide(COPIES, MENTIONS_CUDA)
    tree = cst.parse_module(COPIES)
    found = elision.definitions_in(tree)
    assert sorted(node.name.value for node in found) == ["describe", "fetch", "run_epoch"]
    assert tree.body[3].body.body[0] in found  # (Trainer.describe: a method of a class that is kept)
    assert elision.definitions_in(cst.parse_module(COPIES.replace(b"def describe", b"def summary"))) is None
    assert elision.definitions_in(cst.parse_module(b"import torch\n")) is None
