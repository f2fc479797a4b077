"""TP022: a file that uses the target's device module gets the import that provides it."""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

import libcst as cst

from torchport import targets
from torchport.migrate import imports  # (a module: it imports the rules' base in turn)
from torchport.migrate.rules.base.nodes import dotted_name
from torchport.migrate.rules.base.rule import Rule


def _device_module_pattern(device_module: str) -> bytes:
    """`torch.npu` spelled out, or imported by its last name (`from torch import npu`)."""
    package, _, name = device_module.rpartition(".")
    return rb"\b%s\b|\bfrom[ \t]+%s[ \t]+import\b[^\n]*\b%s\b" % (
        re.escape(device_module.encode()), re.escape(package.encode()), re.escape(name.encode()))


@lru_cache(maxsize=None)
def _imports_package_pattern(package: str) -> re.Pattern:
    return re.compile(rb"^[ \t]*(?:import|from)[ \t]+%s\b" % re.escape(package.encode()), re.MULTILINE)


def imports_setup_package(source: bytes, target) -> bool:
    """Whether the script imports the package that sets up the target's device module, in any
    form (`import torch_npu`, `from torch_npu.contrib import transfer_to_npu`, in a `try:`): the
    one answer to "is it imported already?", for this rule and for the tidying of imports that
    adds the setup import to every other file migrated (`missing_setup_import`)."""
    return bool(_imports_package_pattern(target.setup_import).search(source))


def missing_setup_import(context, added: Collection[str]) -> bool:
    """Whether a migrated file still lacks the target's setup import: the script does not import
    its package, this rule placed none, and the imports `added` for the new code are not it
    (`import torch_npu.profiler` does not count: it is there for the name, source.py places
    the setup import apart)."""
    target = context.target
    if not target.setup_import or target.setup_import in added or SetupImportRule.code in context.once:
        return False  # (the rule's row is reported once a file: once it placed the import)
    return not imports_setup_package(context.whole_source, target)


class SetupImportRule(Rule):
    """`torch.npu` exists only once `torch_npu` is imported: a file that uses the target's
    device module (`import torch.npu`, `from torch.npu import amp`, `torch.npu.synchronize()`)
    and never imports the package that provides it gets that import, before the first import
    of the device module, else right after the first import of torch. (Code already partly ported by hand,
    as GPU2Ascend's "insert ahead" rule has it.)"""

    code = "TP022"
    order = 240
    mentions = b"|".join(
        _device_module_pattern(t.device_module) for t in map(targets.get, targets.names()) if t.setup_import
    )
    title = "the device module's setup import"
    readme = """npu: a file that uses `torch.npu` (`import torch.npu`, `from torch.npu import amp`) without importing
    `torch_npu` (code partly ported by hand) gets `import torch_npu` before its first import of `torch.npu`,
    else after `import torch`"""
    sample = "import os\nfrom torch.npu import amp\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return target.setup_import is not None

    def visit_Module(self, node: cst.Module) -> None:  # noqa: N802
        source, target = self.context.whole_source, self.target
        if not re.search(_device_module_pattern(target.device_module), source):
            return
        if imports_setup_package(source, target):
            return
        setup = cst.parse_statement(f"import {target.setup_import}")
        lines = [s for s in node.body if isinstance(s, cst.SimpleStatementLine)]
        # (the file's imports, not this piece's alone: pieces.py)
        if any(self._imports_device_module(i) for s in self.context.top_level_imports() for i in s.body):
            first_use = next((s for s in lines if any(self._imports_device_module(i) for i in s.body)), None)
            if first_use is not None and self.context.first_time(self.code):
                self.change(first_use, lambda updated: cst.FlattenSentinel([setup, updated]),
                            f"import {target.setup_import} first: it provides {target.device_module}")
            return
        torch_import = next((s for s in lines if any(imports.imports_torch(i) for i in s.body)), None)
        if torch_import is not None and self.context.first_time(self.code):
            self.change(torch_import, lambda updated: cst.FlattenSentinel([updated, setup]),
                        f"import {target.setup_import}: it provides {target.device_module}")

    def _imports_device_module(self, statement: cst.BaseSmallStatement) -> bool:
        module = self.target.device_module
        package, _, name = module.rpartition(".")
        within = lambda dotted: dotted == module or dotted.startswith(module + ".")  # noqa: E731
        if isinstance(statement, cst.Import):
            return any(within(dotted_name(a.name) or "") for a in statement.names)
        if isinstance(statement, cst.ImportFrom) and not statement.relative and statement.module is not None:
            imported_from = dotted_name(statement.module) or ""
            if within(imported_from):
                return True
            return imported_from == package and not isinstance(statement.names, cst.ImportStar) and any(
                isinstance(a.name, cst.Name) and a.name.value == name for a in statement.names)
        return False
