"""TP024: `x.cuda(async=True)`, PyTorch's spelling before 0.4, becomes `x.cuda(non_blocking=True)`."""

from __future__ import annotations

from torchport.async_arguments import NEW, OLD, rename_async_arguments
from torchport.findings import Finding, Operation
from torchport.migrate.rules.base.rule import TokenRule


class AsyncKeywordRule(TokenRule):
    """PyTorch before 0.4 spelled `non_blocking=` as `async=` (`.cuda(async=True)`, `.to()`,
    `.pin_memory()`, `.type()`, `.copy_()`): since Python 3.7 `async` is a keyword, and a file that
    uses it so is not valid Python at all, for LibCST or for Python. Before the file is parsed,
    each `async` token that is a keyword argument of a call (inside the call's parentheses, followed
    by `=`, not in a lambda's parameters) becomes `non_blocking` (torchport/async_arguments.py, which
    `run` applies in memory too); strings, comments, `async def` and `await` are left alone, and so is
    a parameter named `async` (the file then stays invalid, and is listed as pre-3.7 code)."""

    code = "TP024"
    order = 10
    mentions = rb"\basync\s*=(?!=)"
    title = "async= arguments"
    readme = """`x.cuda(async=True)`, `.to(d, async=True)`, any call's `async=` (PyTorch before 0.4; not valid Python
    since 3.7) → `non_blocking=`, on the tokens before the parse, so that the rest of the file is migrated
    (strings, comments, `async def` untouched)"""
    sample = "import torch\nx = torch.zeros(1).cuda(async=True)\n"

    @classmethod
    def rewrite(cls, source: bytes, path: str) -> tuple[bytes, list[Finding]]:
        renamed, lines = rename_async_arguments(source)
        if not lines:
            return source, []
        message = f"{OLD}= -> {NEW}= (renamed in PyTorch 0.4; {OLD} is a keyword since Python 3.7)"
        return renamed, [Finding(path, row, row, cls.code, Operation.MODIFY, message) for row in lines]
