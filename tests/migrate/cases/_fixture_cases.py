"""What the fixture cases share: how a case is written, and how it is run.

A case is `pytest.param(source, {target: expected, ...}, id="what the case is")`: the source a
script has, and the whole file `migrate_source` makes of it on each target, compared exactly. A
target the case does not name takes the case's "default" (UNCHANGED: the source as it is). On CUDA
itself (cuda) a case that does not name it expects the source unchanged and no row, whatever its
default: CUDA code runs there as written. The targets torchport ships (BUILT_IN) are named by every
case that has no default: each differs from the others by design. Any other target (one added
under targets/, or installed from a vendor's package) is tested by every case as it is, whatever
its default (which speaks of the built-in targets), with what can be said from its own data alone
(Unnamed): the migration gives no error, its output is valid
Python that a second migration leaves as it is, its rows are of the rules' own codes, and on a
target with a device of its own it writes no CUDA device the source did not have. Advice rules change nothing and write rows: their cases are
`pytest.param(source, {target: [(code, line, operation), ...]}, id=...)`, the rows of the module's
codes, exactly. A module keeps them in `CASES`, `ROWS`, and `APPLIED` (cases migrated with
--apply-affinity).

Each test module names the rule it specifies by its code (`CODE = "TP003"`, or `CODES` for a
family of advice rules): test_every_rule_has_cases.py reads the rules from the registry and these
modules by their codes, never a rule's file.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from _built_in_targets import BUILT_IN  # (each named by every case, or by its default)
from torchport import targets
from torchport.migrate import migrate_source

UNCHANGED = "<the source, unchanged>"


class Unnamed:
    """What a case expects of a target it does not name: what its data alone lets one say."""

    def __init__(self, expected: dict) -> None:
        self.rows = any(isinstance(wanted, list) for wanted in expected.values())

    def __repr__(self) -> str:
        return "<derived from the target's data>"

# How a file that imports torch starts, and what it starts with once migrated where the target adds to it.
TORCH = "import torch\n"
TORCH_NPU = "import torch\nimport torch_npu\n"
TORCH_DEVICE_TYPE = (
    "import torch\n"
    'DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"\n'
)


def per_target(cases: list, cuda_takes_default: bool = False) -> list:
    """Each case once per target, as (source, target, what is expected there), its id "<case>-<target>".
    `cuda_takes_default`: on cuda an unnamed case takes its default too (a rule on torch's own
    names, which CUDA code can get wrong as well)."""
    expanded = []
    for case in cases:
        source, expected = case.values
        unnamed = set(BUILT_IN) - set(expected) - set(_cuda_itself())
        assert unnamed == set() or "default" in expected, f"{case.id}: no expectation for {sorted(unnamed)}"
        for target in targets.names():
            if target in expected:
                wanted = expected[target]
            elif target not in BUILT_IN and target not in _cuda_itself():  # (a default speaks of the built-in ones)
                wanted = Unnamed(expected)
            else:
                nothing = target in _cuda_itself() and not cuda_takes_default
                wanted = _on_cuda_itself(expected) if nothing else expected.get("default")
            expanded.append(pytest.param(source, target, source if wanted is UNCHANGED else wanted, id=f"{case.id}-{target}"))
    return expanded


def _cuda_itself() -> list[str]:
    """The targets CUDA code runs on as written (cuda): a case that does not name them expects
    nothing there, neither a change nor a row."""
    return [name for name in targets.names() if targets.get(name).runs_cuda_code]


def _on_cuda_itself(expected: dict):
    return [] if any(isinstance(wanted, list) for wanted in expected.values()) else UNCHANGED


@lru_cache(maxsize=None)
def migrated(source: str, target: str, apply_affinity: bool = False):
    """`migrate_source`'s result (kept: the coverage test reads every case's rows again)."""
    return migrate_source(source.encode(), targets.get(target), "case.py", apply_affinity=apply_affinity)


def assert_migrates(source: str, target: str, expected: str, apply_affinity: bool = False) -> None:
    """`source` becomes `expected` on `target`, and `expected` stays as it is when migrated again."""
    if isinstance(expected, Unnamed):
        return assert_as_its_data_says(source, target, apply_affinity)
    result = migrated(source, target, apply_affinity)
    assert result.error is None
    assert result.source.decode() == expected
    assert migrated(expected, target, apply_affinity).source.decode() == expected, "migrating the output again changed it"


def rows_of(source: str, target: str, codes: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """The (code, line, operation) rows of `codes` that migrating `source` to `target` writes."""
    return sorted((f.code, f.start_line, f.operation.value) for f in migrated(source, target).findings if f.code in codes)


def assert_rows(source: str, target: str, rows: list, codes: str | tuple[str, ...]) -> None:
    """Migrating `source` to `target` writes exactly `rows` for the rule(s) `codes`."""
    codes = (codes,) if isinstance(codes, str) else codes
    if isinstance(rows, Unnamed):
        return assert_as_its_data_says(source, target)
    assert rows_of(source, target, codes) == sorted(rows)


def assert_as_its_data_says(source: str, target: str, apply_affinity: bool = False) -> None:
    """What a target no case names must do with any case's source (see the module's docstring)."""
    from torchport.async_arguments import rename_async_arguments
    from torchport.migrate.codes import known_codes
    from torchport.targets.devices import cuda_device

    result = migrated(source, target, apply_affinity)
    assert result.error is None
    output = result.source.decode()
    compile(output, "case.py", "exec")
    assert migrated(output, target, apply_affinity).source.decode() == output, "migrating the output again changed it"
    assert {f.code for f in result.findings} <= known_codes()
    facts = targets.get(target)
    if facts.has_device and not facts.device_chosen_at_run_time:
        import ast

        def cuda_devices(code: str) -> list[str]:
            return [node.value for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Constant)
                    and isinstance(node.value, str) and cuda_device(node.value)[0]]

        before = cuda_devices(rename_async_arguments(source.encode())[0].decode())  # (a pre-3.7 source, as TP024 reads it)
        assert len(cuda_devices(output)) <= len(before), "the migration wrote a CUDA device"
