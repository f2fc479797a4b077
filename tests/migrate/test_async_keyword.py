"""TP024: `async=` keyword arguments (PyTorch before 0.4, not valid Python since 3.7) become
`non_blocking=` before the parse, and the rest of the file is migrated; code that is still not
valid Python says why, at Python's own line, naming Python 2 or pre-3.7 code where that is why."""

from __future__ import annotations

import pytest

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.rules.async_keyword import AsyncKeywordRule
from torchport.migrate.workers import Job, migrate_one

TARGETS = [name for name in targets.names() if name != "cuda"]  # (every target: an added one too)


def _rewritten(source: str) -> str:
    text, _ = AsyncKeywordRule.rewrite(source.encode(), "t.py")
    return text.decode()


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param("x = x.cuda(async=True)\n", "x = x.cuda(non_blocking=True)\n", id="cuda"),
        pytest.param("x = x.to(device, async=True)\n", "x = x.to(device, non_blocking=True)\n", id="to"),
        pytest.param("y.copy_(x, async = True)\n", "y.copy_(x, non_blocking = True)\n", id="copy_ spaced"),
        pytest.param("x = x.type(T, async=True)\n", "x = x.type(T, non_blocking=True)\n", id="type"),
        pytest.param("x = x.cpu(async=True)\n", "x = x.cpu(non_blocking=True)\n", id="cpu"),
        pytest.param("f(**kw, async=1)\n", "f(**kw, non_blocking=1)\n", id="after keywords"),
        pytest.param("x = batch[0](async=True)\n", "x = batch[0](non_blocking=True)\n", id="a subscript called"),
        pytest.param("x = x.cuda(\n    async=True,\n)\n", "x = x.cuda(\n    non_blocking=True,\n)\n", id="over lines"),
        pytest.param("x = f(g(async=True), async=False)\n", "x = f(g(non_blocking=True), non_blocking=False)\n", id="nested"),
        pytest.param("f(key=lambda a: a, async=True)\n", "f(key=lambda a: a, non_blocking=True)\n", id="after a lambda"),
        pytest.param("@retry(async=True)\ndef f():\n    pass\n", "@retry(non_blocking=True)\ndef f():\n    pass\n",
                     id="decorator"),
    ],
)
def test_async_keyword_arguments_become_non_blocking(before, after):
    assert _rewritten(before) == after


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('s = "x.cuda(async=True)"\n', id="string"),
        pytest.param("x = 1  # x.cuda(async=True)\n", id="comment"),
        pytest.param('"""\nx.cuda(async=True)\n"""\n', id="docstring"),
        pytest.param("async def f(x):\n    return await x.g(y)\n", id="async def and await"),
        pytest.param("f(async_=1, is_async=2)\n", id="other names"),
        pytest.param("def f(async=False):\n    pass\n", id="a parameter"),
        pytest.param("f(lambda async=1: async)\n", id="a lambda's parameter"),
        pytest.param("self.async = True\n", id="an attribute"),
        pytest.param("f(x == async)\n", id="not a keyword argument"),
    ],
)
def test_what_is_not_an_async_keyword_argument_is_left_alone(source):
    assert _rewritten(source) == source


def test_the_rest_of_the_file_is_migrated_and_each_line_has_a_row():
    source = b"import torch\n\ndef train(x, y):\n    x = x.cuda(async=True)\n    y = y.cuda(async=True)  # async=True\n    return x, y\n"
    for target in TARGETS:
        result = migrate_source(source, targets.get(target), "train.py")
        assert result.error is None and b"async" in result.source  # (the comment keeps it)
        assert b"(async=" not in result.source and b".cuda(" not in result.source
        rows = [(f.start_line, f.code) for f in result.findings if f.code == "TP024"]
        assert rows == [(4, "TP024"), (5, "TP024")], target
        again = migrate_source(result.source, targets.get(target), "train.py")
        assert again.source == result.source and not again.changed, target
    npu = migrate_source(source, targets.get("npu"), "train.py").source.decode()
    assert "x = x.npu(non_blocking=True)" in npu


def test_a_file_that_only_spells_async_as_an_argument_is_migrated_too():
    result = migrate_source(b"def load(batch):\n    return batch.pin_memory().to(dev, async=True)\n", targets.get("npu"))
    assert result.error is None and b"to(dev, non_blocking=True)" in result.source


def test_latin1_and_bom_files_keep_their_bytes_around_the_rewrite():
    latin1 = b'# -*- coding: latin-1 -*-\nlabel = "caf\xe9"; x = x.cuda(async=True)\n'
    assert _bytes(latin1) == latin1.replace(b"async", b"non_blocking")
    bom = b'\xef\xbb\xbfx = x.cuda(async=True)  # "caf\xc3\xa9"\n'
    assert _bytes(bom) == bom.replace(b"async", b"non_blocking")


def _bytes(source: bytes) -> bytes:
    return AsyncKeywordRule.rewrite(source, "t.py")[0]


PYTHON2 = [
    pytest.param(b'import torch\nx = 1\nprint "cuda"\n', 3, "a print statement", id="print"),
    pytest.param(b'import torch\nexec "x = 1"\n', 2, "an exec statement", id="exec"),
    pytest.param(b"import torch\ntry:\n    pass\nexcept ValueError, e:\n    pass\n", 4, "except E, e:", id="except"),
    pytest.param(b"import torch\nname = `torch.cuda`\n", 2, "backticks", id="backticks"),
    pytest.param(b"import os, torch\nos.chmod('a', 0777)\n", 2, "octal", id="octal"),
    pytest.param(b'import torch\ns = ur"cuda"\n', 2, "ur''", id="ur string"),
    pytest.param(b"import torch\nn = 10L\n", 2, "long literal", id="long"),
    pytest.param(b"import torch\nif torch.cuda <> None:\n    pass\n", 2, "<>", id="not equal"),
    pytest.param(b'import torch\nraise ValueError, "no cuda"\n', 2, "raise E, message", id="raise"),
]


@pytest.mark.parametrize("source, line, construct", PYTHON2)
def test_python2_code_is_listed_as_python2_at_its_line(source, line, construct):
    for data in (source, source.replace(b"torch", b"numpy")):  # (mentioning CUDA or not)
        result = migrate_one(Job("old.py", data), "cpu")
        assert result.source == data and not result.changed
        assert result.error.startswith(f"not valid Python at line {line}: Python 2 syntax ("), result.error
        assert construct in result.error


def test_the_line_of_a_file_that_does_not_parse_is_python_s_own():
    source = b"import torch\n\ndef main():\n    x = torch.zeros(1)\n    x = x.cuda()\n    self.async = 1\n    print(x)\n"
    result = migrate_one(Job("t.py", source), "cpu")
    assert result.error.startswith("not valid Python at line 6: pre-3.7 syntax (async or await used as a name")
    broken = b"import torch\nx = torch.zeros(1).cuda(\ny = 1\n"
    assert migrate_one(Job("b.py", broken), "cpu").error == "not valid Python at line 2: '(' was never closed"


@pytest.mark.parametrize("line", ["self.async = True", "from async import AsyncSampler", "def async(x): pass"])
def test_async_used_as_a_name_is_listed_as_pre_37_code(line):
    result = migrate_one(Job("t.py", f"import torch\n{line}\n".encode()), "cpu")
    assert result.error.startswith("not valid Python at line 2: pre-3.7 syntax"), result.error


def test_a_parameter_named_async_leaves_the_file_unmigrated_and_says_why():
    source = b"import torch\n\ndef move(x, async=False):\n    return x.cuda(async=async)\n"
    result = migrate_one(Job("t.py", source), "npu")
    assert result.source == source and not result.findings
    assert result.error.startswith("not valid Python at line 3: pre-3.7 syntax")
