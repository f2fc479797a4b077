"""A large file is read and migrated in pieces of top-level statements (pieces.py), and that gives
what migrating it whole gives: the same text and the same rows, on every target. Here the
thresholds are forced down, so that files small enough to migrate whole go in pieces too (down
to one statement a piece)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from _ported import PORTED

from torchport import targets
from torchport.migrate import pieces
from torchport.migrate.source import migrate_source

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "examples"

CROSS_PIECE = b'''"""What a rule needs of other statements: imports, events, guards, the line before."""
import os
import torch
import torch.cuda
from torch.cuda.amp import autocast, GradScaler
from torch.profiler import profile, ProfilerActivity

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
device = torch.device("cuda")

start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
start.record()
x = torch.zeros(2).cuda(LOCAL_RANK)
torch.manual_seed(1)
torch.cuda.manual_seed_all(1)
torch.cuda.synchronize()
torch.cuda.synchronize()

# the end of the timing
end.record()
end.synchronize()
print(start.elapsed_time(end))


def helper(a):
  return a + 1   # (two spaces: the file's first indented block)


@torch.no_grad()
def evaluate(model, batch):
  return model(batch.cuda(non_blocking=True))


class Trainer:
  def step(self, model, batch, opt):
    with autocast():
      loss = model(batch.cuda())
    loss.backward()
    opt.step()

  def unrelated(self):
    return 1
    # an indented comment after a block


for i in range(3):
    y = x.to("cuda:0")
if torch.cuda.is_available():
    torch.cuda.synchronize()
torch.cuda.empty_cache()
import torch.nn as nn  # a late import
model = nn.Linear(2, 2).cuda()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    pass
loss = model(x).sum(); loss.backward()
z = x.cuda(); w = x.cuda()
if torch.cuda.is_available() and not False:
    print("You have a CUDA device")
scaler = GradScaler()
'''


AMBIGUOUS = b"""import torch
from torch.cuda import amp


def reset():
    global amp
    amp = None


with amp.autocast():
    x = torch.zeros(1).cuda()
"""


def _repeated(body: bytes, times: int) -> bytes:
    """`body` with `times` more CUDA-free and CUDA-using definitions after it (a medium file)."""
    more = b"".join(
        b"def plain%d(a):\n    return a * %d\n\n\ndef moved%d(a):\n    return a.cuda() + %d\n\n\n" % (i, i, i, i)
        for i in range(times)
    )
    return body + b"\n\n" + more


def _inputs():
    cases = [("cross_piece", CROSS_PIECE), ("cross_piece_crlf", CROSS_PIECE.replace(b"\n", b"\r\n"))]
    cases += [("no_final_newline", CROSS_PIECE.rstrip(b"\n")), ("medium", _repeated(CROSS_PIECE, 60))]
    cases += [("latin1", b"# -*- coding: latin-1 -*-\n" + CROSS_PIECE.replace(b"a late import", b"caf\xe9"))]
    cases += [("bom", b"\xef\xbb\xbf" + CROSS_PIECE)]
    cases += [("ambiguous", AMBIGUOUS)]  # (migrated whole: a scope analysis of the whole file tells)
    cases += [(p.name, p.read_bytes()) for p in sorted((HERE / "golden").glob("*.py"))]
    cases += [(p.name, p.read_bytes()) for p in sorted(EXAMPLES.glob("*.py"))]
    return cases


def force_pieces(monkeypatch) -> dict[str, int]:
    """From now on every file is read and migrated in pieces, each as small as the cuts allow;
    the pieces are counted."""
    counts = {"read": 0, "migrated": 0}
    plan, trees = pieces.plan, pieces.AstPieces.trees

    def counted_plan(*args, **kwargs):
        found = plan(*args, **kwargs)
        counts["migrated"] += len(found)
        return found

    def counted_trees(self):
        for tree in trees(self):
            counts["read"] += 1
            yield tree

    monkeypatch.setattr(pieces, "plan", counted_plan)
    monkeypatch.setattr(pieces.AstPieces, "trees", counted_trees)
    for name in ("READ_WHOLE_BYTES", "MIGRATE_WHOLE_BYTES"):
        monkeypatch.setattr(pieces, name, 0)
    for name in ("READ_PIECE_BYTES", "MIGRATE_PIECE_BYTES"):
        monkeypatch.setattr(pieces, name, 1)
    return counts


@pytest.fixture
def in_pieces(monkeypatch):
    return force_pieces(monkeypatch)


def _rows(result):
    return [(f.start_line, f.end_line, f.code, f.operation, f.message, f.api) for f in result.findings]


@pytest.mark.parametrize("target", PORTED)
@pytest.mark.parametrize(("name", "source"), _inputs(), ids=[name for name, _ in _inputs()])
def test_migrating_in_pieces_gives_the_whole_file_result(name, source, target, monkeypatch):
    whole = migrate_source(source, targets.get(target), name)
    counts = force_pieces(monkeypatch)
    in_parts = migrate_source(source, targets.get(target), name)
    assert in_parts.source == whole.source
    assert _rows(in_parts) == _rows(whole)
    assert in_parts.error == whole.error
    assert counts["read"] > 1


def test_the_cross_piece_file_is_really_migrated_in_many_pieces(in_pieces):
    result = migrate_source(CROSS_PIECE, targets.get("accelerator"), "t.py")
    assert in_pieces["migrated"] > 10 and result.changed
    again = migrate_source(result.source, targets.get("accelerator"), "t.py")
    assert again.source == result.source


def test_a_module_level_event_and_its_uses_go_in_one_piece():
    top = pieces.TopLevel()
    source = b"import torch\nstart = torch.cuda.Event()\nx = 1\nstart.record()\ny = 2\n"
    lines = source.splitlines(keepends=True)
    follows = pieces.re.compile(rb"\bEvent\b")
    for number, node in enumerate(ast.parse(source).body, start=1):
        top.add(node, number, number, number, follows, lines[number - 1])
    plan = pieces.plan(top, source, len(lines), size=1)
    assert [list(p.statements) for p in plan] == [[0], [1, 2, 3], [4]]


TRICKY = b'''import torch
text = """
x = 1
def f():
"""
y = (1,
2)
@property
def g(): pass
if y:
    pass
else:
    pass
z = 1 + \\
3
class A:
    b = 1
w = 2
'''


def test_a_file_is_read_in_pieces_cut_only_between_top_level_statements():
    reader = pieces.AstPieces(TRICKY.splitlines(keepends=True), "utf-8", size=1)
    body = [node for tree in reader.trees() for node in tree.body]
    assert ast.dump(ast.Module(body, []), include_attributes=True) == ast.dump(ast.parse(TRICKY), include_attributes=True)
    firsts = {min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", ()))]) for n in ast.parse(TRICKY).body}
    assert len(reader.ranges) >= 4 and {first for first, _ in reader.ranges} <= firsts
    assert [ast.dump(n) for tree in reader.trees() for n in tree.body] == [ast.dump(n) for n in body]  # (again)


def test_a_file_that_is_not_valid_python_raises_where_it_is_read_in_pieces():
    reader = pieces.AstPieces(b"x = 1\ny = (\nz = 2\n".splitlines(keepends=True), "utf-8", size=1)
    with pytest.raises(SyntaxError):
        list(reader.trees())


def test_a_large_file_that_is_not_valid_python_says_why_without_a_whole_parse(monkeypatch):
    monkeypatch.setattr(pieces, "READ_WHOLE_BYTES", 0)
    result = migrate_source(b"import torch\nx = torch.zeros(1).cuda()\nprint 'x'\n", targets.get("cpu"))
    assert result.error == "not valid Python at line 3: Python 2 syntax (a print statement)"


def test_a_dense_file_whose_every_line_calls_cuda_is_migrated_in_pieces(in_pieces, monkeypatch):
    monkeypatch.setattr(pieces, "READ_PIECE_BYTES", 4096)
    monkeypatch.setattr(pieces, "MIGRATE_PIECE_BYTES", 4096)
    source = b"import torch\nt = torch.zeros(1)\n" + b"".join(b"x%d = t.cuda()\n" % i for i in range(3000))
    result = migrate_source(source, targets.get("npu"), "dense.py")
    assert result.error is None and result.source.count(b".npu()") == 3000
    assert [f.start_line for f in result.findings if f.code == "TP003"] == list(range(3, 3003))
    assert in_pieces["read"] > 5 and in_pieces["migrated"] > 5
