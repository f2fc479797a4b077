"""The compat form: a file the conversion cannot rewrite with confidence imports the stand-in
package in place of apex (`from apex import amp` -> `from torchport.compat.apex import amp`,
`import apex` -> `import torchport.compat.apex as apex`), and nothing else of it changes: the
stand-in has apex's public API, so the file runs as it was written, on any device."""

from __future__ import annotations

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch.changes import FALLBACK, NOTE, Unconvertible
from torchport.apex_to_torch.imports import apex_imports, imported_names, is_apex_alias, module_of
from torchport.apex_to_torch.reading import read
from torchport.apex_to_torch.references import uses
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, dotted
from torchport.findings import Operation



def compat_module(module: str) -> str:
    """apex.parallel -> torchport.compat.apex.parallel."""
    return apex.COMPAT + module[len(apex.APEX):]


def to_compat(text: str, why: Unconvertible, keep: tuple[str, ...] = ()) -> tuple[str, list[Change]]:
    """`text` importing the stand-in where it imported apex, but for the imports of names the
    target's own apex build has (`keep`), which stay."""
    found = read(text)
    edits, changes = Edits(), []
    reason = f"{why.why} (line {why.line})" if why.line else why.why
    beyond = _roots_beyond(found, keep) if keep else set()
    for item in apex_imports(found, stars=True):
        if keep and all(apex.in_build(name, keep) for name in imported_names(item)) and not _binds(item) & beyond:
            continue
        node, line = item.node, found.line(item.node)
        if isinstance(node, cst.ImportFrom):
            edits.replace(node, node.with_changes(module=cst.parse_expression(compat_module(item.module))))
            what = f"from {item.module} import ... -> from {compat_module(item.module)} import ..."
        else:
            edits.replace(node, node.with_changes(names=[_compat_alias(node, a) for a in node.names]))
            what = f"import {item.module} -> import {compat_module(item.module)}"
        changes.append(Change(line, line, FALLBACK.code, Operation.MODIFY,
                              f"{what}: the stand-in package, as the file is not rewritten to native torch: {reason}",
                              item.module))
    changes += _kernels_to_compat(found, edits, reason)
    changes += [Change(at, at, NOTE.code, Operation.NOTE, note, apex.FP16_UTILS) for at, note in why.notes]
    return edits.apply(found), changes


def _kernels_to_compat(found: Read, edits: Edits, reason: str) -> list[Change]:
    """`import amp_C` (apex's CUDA kernels, which the stand-in's multi_tensor_applier is called with)
    -> `import torchport.compat.amp_C as amp_C`: its kernels on torch's foreach ops."""
    changes = []
    for node in found.walk(found.module):
        if isinstance(node, cst.Import) and any(dotted(a.name) == apex.AMP_C for a in node.names):
            names = [a.with_changes(name=cst.parse_expression(apex.COMPAT_AMP_C),
                                    asname=a.asname or cst.AsName(name=cst.Name(apex.AMP_C)))
                     if dotted(a.name) == apex.AMP_C else a for a in node.names]
            edits.replace(node, node.with_changes(names=names))
            line = found.line(node)
            changes.append(Change(line, line, FALLBACK.code, Operation.MODIFY,
                                  f"import {apex.AMP_C} -> import {apex.COMPAT_AMP_C}: apex's kernels on torch's "
                                  f"foreach ops, beside the stand-in package: {reason}", apex.AMP_C))
    return changes


def _compat_alias(node: cst.Import, alias: cst.ImportAlias) -> cst.ImportAlias:
    if not is_apex_alias(node, alias):
        return alias
    module = module_of(node, alias)
    if alias.asname is not None:  # import apex.amp as amp -> import torchport.compat.apex.amp as amp
        return alias.with_changes(name=cst.parse_expression(compat_module(module)))
    # `import apex.amp` binds `apex`: the stand-in, bound to the same name
    top = dotted(alias.name).split(".")[0]
    return alias.with_changes(name=cst.parse_expression(compat_module(apex.APEX)),
                              asname=cst.AsName(name=cst.Name(top)))


def _roots_beyond(found: Read, keep: tuple[str, ...]) -> set[str]:
    """The names through which the file reaches an apex name the target's own apex build lacks
    (`apex` of `apex.parallel.convert_syncbn_model(...)`)."""
    roots = set()
    for use in uses(found):
        if not apex.in_build(use.api, keep):
            node = use.node
            while isinstance(node, cst.Attribute):
                node = node.value
            if isinstance(node, cst.Name):
                roots.add(node.value)
    return roots


def _binds(item) -> set[str]:
    """The names an import binds in the file."""
    if isinstance(item.node.names, cst.ImportStar):
        return set()
    return {alias.asname.name.value if alias.asname is not None else (dotted(alias.name) or "").split(".")[0]
            for alias in item.node.names}
