"""TP018, `torch.version.cuda` is None on every build but CUDA's, so a test on it is silently false on
the target: left as it is, and noted, so that a person decides what the test stands for."""

import pytest

from _fixture_cases import TORCH, UNCHANGED, assert_migrates, assert_rows, per_target

CODE = "TP018"

CASES = [
    pytest.param(
        TORCH + (
            "if torch.version.cuda:\n"
            '    backend = "fast"\n'
        ),
        {
            "default": UNCHANGED,
        },
        id="a plain test",
    ),
]

ROWS = [
    pytest.param(
        TORCH + (
            "if torch.version.cuda:\n"
            '    backend = "fast"\n'
        ),
        {
            "default": [("TP018", 2, "NOTE")],
        },
        id="a plain test",
    ),
    pytest.param(
        TORCH + "use_bf16 = torch.version.cuda is not None and torch.cuda.is_bf16_supported()\n",
        {
            "default": [("TP018", 2, "NOTE")],
        },
        id="beside a capability call (TP004 rewrites the call)",
    ),
]


@pytest.mark.parametrize(("source", "target", "expected"), per_target(CASES))
def test_cuda_build_tests_stay(source, target, expected):
    assert_migrates(source, target, expected)


@pytest.mark.parametrize(("source", "target", "rows"), per_target(ROWS))
def test_cuda_build_tests_are_noted(source, target, rows):
    assert_rows(source, target, rows, CODE)
