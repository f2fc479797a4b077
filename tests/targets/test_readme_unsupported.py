"""The README's "What still needs a person" paragraph says what the verdicts say, target by target.

Each claim is read from the paragraph and checked against the verdicts, which come from the
generated surfaces: a change in the data that the README does not follow fails here.
"""

import re
from pathlib import Path

from torchport import targets
from torchport.targets.verdict import Kind

README = Path(__file__).resolve().parents[2] / "README.md"


def _paragraph() -> str:
    text = README.read_text()
    start = text.index("What still needs a person")
    return " ".join(text[start : text.index("\n\n", start)].split())


def _apis(text: str) -> list[str]:
    return re.findall(r"`(\w+)`", text)


def _names(listed: str) -> set[str]:
    """{"cpu", "mps", "accelerator"} from "cpu, mps and accelerator"."""
    return set(re.split(r", | and ", listed))


def _claim(pattern: str) -> str:
    found = re.search(pattern, _paragraph())
    assert found, pattern
    return found.group(1)


def _unsupported_on(api: str) -> set[str]:
    return {name for name in targets.names() if targets.get(name).verdict(f"torch.cuda.{api}").kind is Kind.UNSUPPORTED}


def test_what_no_target_has_is_unsupported_on_every_target():
    for api in _apis(_claim(r"On every target but CUDA itself: (.*?)\.")):
        assert _unsupported_on(api) == set(targets.names()), api


def test_graphs_and_allocators_are_unsupported_exactly_where_the_readme_says():
    without = _names(_claim(r"On (\w+(?:, \w+)* and \w+): CUDA graphs"))
    having = _names(_claim(r"which (\w+(?: and \w+)*) have:"))
    assert without | having == set(targets.names()) and not without & having
    for api in _apis(_claim(r"CUDA graphs (.*?), which")):
        assert _unsupported_on(api) == without, api


def test_the_graph_class_each_target_has_is_named():
    sentence = _claim(r"(`CUDAGraph` becomes .*? the others keep their names)")
    for name in targets.names():
        verdict = targets.get(name).verdict("torch.cuda.CUDAGraph")
        if verdict.kind is Kind.SAME:
            assert f"`{verdict.replacement}` on {name}" in sentence


def test_what_only_one_target_has_is_unsupported_on_the_others():
    for target, listed in re.findall(r"[Oo]nly (\w+) has (.*?)[;.]", _paragraph()):
        for api in _apis(listed):
            assert _unsupported_on(api) == set(targets.names()) - {target}, api
