"""Random valid Python never crashes the migrator, and what it writes still compiles.

hypothesmith writes programs from Python's grammar; since those rarely say "cuda", CUDA idioms
are spliced in (before, after, and inside a function, class, loop or `with` block) so the rules
really run on odd surroundings.
"""

from __future__ import annotations

import textwrap
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _idioms import IDIOMS
from _ported import PORTED

from torchport import targets
from torchport.migrate import FileResult, migrate_source

# random code says odd things (`1()`): the compiler's warnings about them are not ours
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

TARGETS = PORTED  # (on cuda the rules do nothing)
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)

PYTHON = hypothesmith.from_grammar()  # built once: building it parses Python's grammar
NODES = hypothesmith.from_node()
NAMES = st.sampled_from(["x", "model", "batch", "self.net", "t[0]", "args.rank"])
INDICES = st.sampled_from(["0", "1", "rank", "i + 1", "-1"])


WRAPPERS = [
    "{body}",
    "def _f(x, model, batch, rank, i, args, t, self):\n{indented}",
    "async def _g(x, rank):\n{indented}",
    "class _C:\n{indented}",
    "for i in range(2):\n{indented}",
    "while False:\n{indented}",
    "if __name__ == '__main__':\n{indented}",
    "with open('f') as fh:\n{indented}",
    "try:\n{indented}\nfinally:\n    pass",
    "if rank:\n    pass\nelif x:\n{indented}\nelse:\n{indented}",
    "match rank:\n    case 0:\n{indented2}",
]


def wrapped(wrapper: str, body: str) -> str:
    return wrapper.format(body=body, indented=textwrap.indent(body, "    "), indented2=textwrap.indent(body, "        "))


@st.composite
def idiom_block(draw) -> str:
    """A few CUDA idioms, possibly inside a block."""
    lines = []
    for template in draw(st.lists(st.sampled_from(IDIOMS), min_size=2, max_size=8)):
        lines.append(template.format(v=draw(NAMES), i=draw(INDICES)))
    body = "\n".join(lines)
    wrapper = draw(st.sampled_from(WRAPPERS))
    return wrapped(wrapper, body)


HEADERS = ["import torch\n", "import os\nimport torch\n", "from __future__ import annotations\nimport torch\n"]


@st.composite
def cuda_program(draw, imports_torch: bool = False) -> str:
    """Random grammatical Python with CUDA idioms before, after, or both."""
    code = draw(PYTHON)
    before = draw(st.lists(idiom_block(), max_size=2))
    after = draw(st.lists(idiom_block(), min_size=1, max_size=4))
    header = draw(st.sampled_from(HEADERS if imports_torch else [*HEADERS, ""]))
    if header.startswith("from __future__") and code.lstrip().startswith("from __future__"):
        header = "import torch\n"
    parts = [header, *(b + "\n" for b in before), code, "\n", *(a + "\n" for a in after)]
    return "".join(parts)


def _compiles(source: str | bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def check(source: bytes, target: str) -> FileResult:
    result = migrate_source(source, targets.get(target), "fuzz.py")  # must not raise
    assert isinstance(result, FileResult)
    assert isinstance(result.source, bytes)
    assert _compiles(result.source), result.source.decode("utf-8", "replace")
    if result.error is not None or not result.changed:
        assert result.source == source  # copied unchanged
    else:
        assert result.error is None
    for finding in result.findings:
        assert finding.file == "fuzz.py"
        assert 0 <= finding.start_line <= finding.end_line
    return result


@settings(SETTINGS, max_examples=100)
@given(code=PYTHON, target=st.sampled_from(TARGETS))
def test_random_python_never_crashes(code: str, target: str) -> None:
    source = code.encode("utf-8", "surrogatepass")
    assume(_compiles(source))
    check(source, target)


@settings(SETTINGS, max_examples=100)
@given(program=cuda_program(), target=st.sampled_from(TARGETS))
def test_random_python_with_cuda_idioms_never_crashes(program: str, target: str) -> None:
    source = program.encode("utf-8", "surrogatepass")
    assume(_compiles(source))
    result = check(source, target)
    assert result.error is None, result.error  # it parsed, so it was migrated
    again = check(result.source, target)
    assert again.source == result.source, "a second migration changed the file"


@settings(SETTINGS, max_examples=60)
@given(code=NODES, blocks=st.lists(idiom_block(), min_size=1, max_size=3), target=st.sampled_from(TARGETS))
def test_random_statements_with_cuda_idioms_never_crash(code: str, blocks: list[str], target: str) -> None:
    """The same over hypothesmith's libcst-built programs (other shapes than the grammar's)."""
    program = "import torch\n" + code + "\n" + "\n".join(blocks) + "\n"
    assume(_compiles(program))
    check(program.encode("utf-8", "surrogatepass"), target)


@pytest.mark.parametrize("target", TARGETS)
@settings(SETTINGS, max_examples=20)
@given(blocks=st.lists(idiom_block(), min_size=1, max_size=4))
def test_cuda_idioms_are_migrated_once_and_for_all(blocks: list[str], target: str) -> None:
    """Idioms alone: migrated without error, and a second migration changes nothing."""
    program = "import os\nimport torch\n\n" + "\n".join(blocks) + "\n"
    assume(_compiles(program))
    result = check(program.encode(), target)
    assert result.error is None, result.error
    again = check(result.source, target)
    assert again.source == result.source
    assert not again.changed


@pytest.mark.parametrize("target", TARGETS)
def test_each_idiom_alone(target: str) -> None:
    """Every idiom once, each in one of the blocks: migrated, compiles, and stays put the second time."""
    changed = 0
    for number, template in enumerate(IDIOMS):
        body = template.format(v="x", i="rank") + "\ndone = True"
        wrapper = WRAPPERS[number % len(WRAPPERS)]
        program = "import os\nimport torch\n\n" + wrapped(wrapper, body) + "\n"
        assert _compiles(program), program
        result = check(program.encode(), target)
        assert result.error is None, (program, result.error)
        changed += result.changed
        again = check(result.source, target)
        assert again.source == result.source, program
    assert changed >= len(IDIOMS) // 2  # the idioms are real work for the rules
