"""Every code torchport writes rows under, and its name: the rules' own (TP0xx, TP1xx, from the
registry), the import tidying's (TP000), --distributed's (TP2xx), the apex conversion's (TP3xx) and
the NPU conversion's (TP4xx, `--from npu`) and --amp's (TP5xx).
Read by the selection (`--select TP1`), the HTML page and check's SARIF rules."""

from __future__ import annotations

from functools import lru_cache

IMPORT_CODE = "TP000"  # the import tidying after the rules (source._tidy_imports); its row in the README's table:
IMPORT_README = """imports: what the new code uses is imported (`torch_npu`, `functools`, ...) where isort puts
it (its section of the first block of imports, in order), CUDA imports no longer used go"""


@lru_cache(maxsize=None)
def _names() -> tuple[tuple[str, str], ...]:
    from torchport.apex_to_torch.changes import CODES as APEX_CODES
    from torchport.distribute.changes import CODES as DISTRIBUTE_CODES
    from torchport.npu_to_cuda.changes import CODES as NPU_CODES
    from torchport.mixed_precision.changes import CODES as AMP_CODES
    from torchport.migrate.rules import RULES

    names = {rule.code: rule.title for rule in RULES}
    names[IMPORT_CODE] = "imports the migrated code needs"
    names.update(DISTRIBUTE_CODES)
    names.update(APEX_CODES)
    names.update(NPU_CODES)
    names.update(AMP_CODES)
    return tuple(names.items())


def rule_names() -> dict[str, str]:
    """code -> its one-line name."""
    return dict(_names())


def known_codes() -> frozenset[str]:
    return frozenset(code for code, _ in _names())
