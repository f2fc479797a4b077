"""The pre-filter answers exactly as the rules' patterns would, by a faster road."""

import re
from pathlib import Path

import pytest

from torchport import targets
from torchport.migrate.mentions import Mentions, _top_level_branches
from torchport.migrate.rules import RULES
from torchport.migrate.source import MENTIONS_CUDA, mentions

HERE = Path(__file__).parent
TEXTS = [p.read_bytes() for p in sorted((HERE / "golden").glob("*.py")) + sorted((HERE.parents[1] / "examples").glob("*/*.py"))]
LINES = sorted({line for text in TEXTS for line in text.splitlines()})


@pytest.mark.parametrize("target", targets.names())
def test_every_pattern_the_rules_declare_has_literals_to_look_for(target):
    """(Otherwise the whole alternation runs as one regex: right, but slow.)"""
    assert mentions(target).branches is not None


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_the_answer_is_the_regex_answer_for_every_rule_on_every_line(rule):
    fast, regex = Mentions([rule.mentions]), re.compile(rule.mentions)
    for text in [*TEXTS, *LINES]:
        assert fast.search(text) == bool(regex.search(text)), text[:80]


def test_the_answer_is_the_regex_answer_for_the_combined_pattern():
    for text in [*TEXTS, *LINES, b"", b"x = 1\n", b"model.to( 0)", b"get_node_local_rank()", b"'RANK'"]:
        assert MENTIONS_CUDA.search(text) == bool(MENTIONS_CUDA.regex.search(text))


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (rb"\bcudnn\b", (b"cudnn",)),
        (rb"get_(?:node_)?(?:local_)?rank\(", (b"rank(",)),
        (rb"\b(?:SGD|Adam)\(", (b"Adam", b"SGD")),
        (rb"[\"']cuda[\"':]", (b"cuda",)),
        (rb"x+cuda", (b"cuda",)),
    ],
)
def test_literals_every_match_contains(pattern, literals):
    assert Mentions([pattern]).branches[0][0] == literals


@pytest.mark.parametrize("pattern", [rb"\d+", rb"ab|cuda", rb"(?i:cuda)", rb"(?i)cuda", rb"cu?da"])
def test_without_a_literal_of_three_bytes_the_whole_regex_runs(pattern):
    fast = Mentions([pattern])
    assert fast.branches is None
    assert fast.search(b"CUDA 12") == bool(re.search(pattern, b"CUDA 12"))


def test_branches_split_only_at_the_top_level():
    assert _top_level_branches(rb"a(b|c)|[|]d|e\|f") == [rb"a(b|c)", rb"[|]d", rb"e\|f"]


def test_extended_mentions_answer_as_the_regex_of_both():
    names = rb"LOCAL_RANK|\bparse_args\b|\bgpu_id\b"
    extended = MENTIONS_CUDA.extended(names)
    regex = re.compile(MENTIONS_CUDA.pattern + b"|" + names)
    assert extended.branches is not None and len(extended.branches) > len(MENTIONS_CUDA.branches)
    for text in [*TEXTS, *LINES, b"self.gpu_id = 1", b"x = 1"]:
        assert extended.search(text) == bool(regex.search(text))
