"""A target that no case names (one added under targets/, or installed from a vendor's package) is
tested by every case as it is, with what its own data lets one say (_fixture_cases.Unnamed): here a
seventh target, xpu's facts under another name, goes through TP004's, TP013's and TP024's cases
(pre-3.7 sources among them)."""

from __future__ import annotations

import dataclasses

import pytest

import _fixture_cases as fixture
from test_tp004_cuda_api import CASES as CUDA_API_CASES, ROWS as CUDA_API_ROWS
from test_tp013_device_comparisons import CASES as COMPARISON_CASES
from test_tp024_async_keyword import CASES as ASYNC_CASES
from torchport import targets


@pytest.fixture
def seventh(monkeypatch):
    known = targets.all_targets()
    foo = dataclasses.replace(known["xpu"], name="foo", rank=99, auto=False)
    monkeypatch.setattr(targets, "all_targets", lambda: {**known, "foo": foo})
    return "foo"


def _params_for(cases, target):
    return [param.values for param in fixture.per_target(cases) if param.id.endswith(f"-{target}")]


def test_every_case_is_run_on_a_target_it_does_not_name(seventh):
    cases = CUDA_API_CASES + COMPARISON_CASES + ASYNC_CASES
    params = _params_for(cases, seventh)
    assert len(params) == len(cases)
    derived = [expected for _, _, expected in params if isinstance(expected, fixture.Unnamed)]
    assert derived, "the cases without a default are derived from the target's data"
    for source, target, expected in params:
        fixture.assert_migrates(source, target, expected)
    for source, target, rows in _params_for(CUDA_API_ROWS, seventh):
        fixture.assert_rows(source, target, rows, "TP004")


def test_the_derived_checks_fail_on_output_that_is_not_python(seventh, monkeypatch):
    source, target, expected = next(p for p in _params_for(CUDA_API_CASES, seventh) if isinstance(p[2], fixture.Unnamed))
    broken = dataclasses.replace(fixture.migrated(source, target), source=b"def (:\n")
    monkeypatch.setattr(fixture, "migrated", lambda *args, **kwargs: broken)
    with pytest.raises(SyntaxError):
        fixture.assert_migrates(source, target, expected)


def test_a_built_in_target_must_still_be_named():
    case = pytest.param("import torch\n", {"npu": "import torch\n"}, id="names only npu")
    with pytest.raises(AssertionError, match="no expectation for"):
        fixture.per_target([case])
