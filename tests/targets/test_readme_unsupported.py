"""The README's "What still needs a person" paragraph says what the verdicts say, target by target.

Each claim is read from the paragraph and checked against the verdicts, which come from the
generated surfaces: a change in the data that the README does not follow fails here. The paragraph
speaks of the targets torchport ships; on any target, its first sentence is checked from the
target's own data: what it names needs a person where the device module lacks it.
"""

import re
from pathlib import Path

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.apis import graphs
from torchport.targets import fallbacks
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind

README = Path(__file__).resolve().parents[2] / "README.md"
# The paragraph speaks of the built-in targets CUDA code is ported to: on CUDA itself (the cuda
# target) every torch.cuda API is there.
PORTED = {name for name in BUILT_IN if not targets.get(name).runs_cuda_code}


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
    """The built-in targets on which `api` is unsupported."""
    return {name for name in BUILT_IN if targets.get(name).verdict(f"torch.cuda.{api}").kind is Kind.UNSUPPORTED}


def _lacked(target, api: str) -> bool:
    """Whether the target's data leave `api` to a person: its device module has neither the name
    nor the class its device names after itself, and neither the target nor the portable
    fallbacks stand in for it."""
    qualified = f"torch.cuda.{api}"
    twin = graphs.twin(api, target.device_type) if target.device_type else None
    has = api in target.surface or (twin is not None and twin in target.surface)
    return not has and qualified not in target.overrides and fallbacks.verdict(qualified, api) is None


def test_on_cuda_itself_nothing_is_unsupported():
    cuda = [targets.get(name) for name in targets.names() if targets.get(name).runs_cuda_code]
    assert cuda and all(target.counts(cuda_apis())[Kind.UNSUPPORTED.value] == 0 for target in cuda)


@pytest.mark.parametrize("name", targets.names())
def test_what_the_paragraph_names_needs_a_person_where_the_device_module_lacks_it(name):
    target = targets.get(name)
    named = [api for api in _apis(_paragraph()) if f"torch.cuda.{api}" in cuda_apis()]
    assert named, "the paragraph names no torch.cuda API"
    for api in named:
        assert (target.verdict(f"torch.cuda.{api}").kind is Kind.UNSUPPORTED) is _lacked(target, api), api


def test_what_no_target_has_is_unsupported_on_every_target():
    for api in _apis(_claim(r"On every target but CUDA itself: (.*?)\.")):
        assert _unsupported_on(api) == PORTED, api


def test_graphs_and_allocators_are_unsupported_exactly_where_the_readme_says():
    without = _names(_claim(r"On (\w+(?:, \w+)* and \w+): CUDA graphs"))
    having = _names(_claim(r"which (\w+(?: and \w+)*) have:"))
    assert without | having == PORTED and not without & having
    for api in _apis(_claim(r"CUDA graphs (.*?), which")):
        assert _unsupported_on(api) == without, api


def test_the_graph_class_each_target_has_is_named():
    sentence = _claim(r"(`CUDAGraph` becomes .*? the others keep their names)")
    for name in sorted(PORTED):
        verdict = targets.get(name).verdict("torch.cuda.CUDAGraph")
        if verdict.kind is Kind.SAME:
            assert f"`{verdict.replacement}` on {name}" in sentence


def test_what_only_one_target_has_is_unsupported_on_the_others():
    for target, listed in re.findall(r"[Oo]nly (\w+) has (.*?)[;.]", _paragraph()):
        for api in _apis(listed):
            assert _unsupported_on(api) == PORTED - {target}, api
