"""`analyze`: each apex use of the code, with what it becomes on the target (apex_api.csv, in the
columns of the other API reports: File, Start Line, End Line, OP, Tips).

What a use becomes comes from `torchport.apis.apex` and from what `--apex` did to its file: kept
(a target with an apex of its own, or `--apex keep`), the native form (`--apex native`), or the
stand-in package (a file the conversion points at `torchport.compat.apex`). Read with `ast`: only
lines are wanted; a file that never says apex is not parsed."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from torchport.apex_to_torch.changes import NOTE
from torchport.apex_to_torch.driver import MENTIONS_APEX
from torchport.apis import apex
from torchport.findings import Finding, Operation
from torchport.migrate import engine
from torchport.migrate.apex import KEEP, NATIVE
from torchport.import_table import ImportTable
from torchport.migrate.walk import scan
from torchport.pyast import AST_PARSE_ERRORS, dotted_name
from torchport.targets import Target

APEX_REPORT = "apex_api.csv"
STAND_IN = "compat"
MODULES = {apex.APEX, apex.AMP, *(f"{apex.APEX}.{name}" for name in ("optimizers", "parallel", "normalization"))}  # FileResult.apex of a file pointed at the stand-in package
AMP_STEPS = {
    apex.INITIALIZE: "torch.amp.autocast around the forward and a torch.amp.GradScaler (O1/O2; O3: the model cast "
                     "to half; O0 or enabled=False: nothing)",
    apex.SCALE_LOSS: "scaler.scale(loss).backward(), the optimizer stepped by scaler.step(optimizer) and scaler.update()",
    apex.MASTER_PARAMS: "scaler.unscale_(optimizer), then the optimizer's own parameters",
    apex.STATE_DICT: "scaler.state_dict()",
    apex.LOAD_STATE_DICT: "scaler.load_state_dict(...)",
    apex.DISABLE_CASTS: "torch.autocast(<device>, enabled=False)",
}


class Use(NamedTuple):
    line: int
    end_line: int
    api: str  # the qualified apex name


def apex_uses(data: bytes) -> list[Use]:
    """Every reference to an apex name (`amp.initialize(...)`, `apex.parallel.DistributedDataParallel`),
    outermost name only, in the order of the file."""
    if not MENTIONS_APEX.search(data):
        return []
    try:
        tree = ast.parse(data)
    except AST_PARSE_ERRORS:
        return []
    table = ImportTable.of_tree(tree)
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            module = node.module or ""
            if not node.level and (module == apex.APEX or module.startswith(f"{apex.APEX}.")):
                uses.append(Use(node.lineno, node.end_lineno or node.lineno, module))  # (its names cannot be told)
            continue
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)) or not isinstance(node.ctx, ast.Load):
            continue
        dotted = dotted_name(node)
        name = table.qualified_name(dotted) if dotted else None
        if name is not None and (name == apex.APEX or name.startswith(f"{apex.APEX}.")):
            uses.append(Use(node.lineno, node.end_lineno or node.lineno, name))
    return sorted(uses)


def becomes(api: str, target: Target, mode: str, way: str) -> str:
    """What `api` becomes on `target` under `--apex mode`, where its file's conversion went `way`."""
    if target.keeps_apex and mode == KEEP:
        if apex.in_build(api, target.apex_build):
            tuned = api == apex.INITIALIZE or api.rsplit(".", 1)[-1].startswith("Fused")
            return (f"kept: Ascend's apex build has it on {target.name} (install that apex)"
                    + ("; how to tune it: TP117 in api_performance_advice.csv" if tuned else ""))
        lacks = f"not in {target.name}'s own apex build (Ascend's)"
        if way == STAND_IN:
            return f"{apex.COMPAT}{api[len(apex.APEX):]}: the stand-in package ({lacks}, and the file has a form " \
                   "with no confident rewrite)"
        return f"{_native_form(api)}, then migrated to {target.name} ({lacks})"
    if mode == KEEP or way == "kept":
        if target.keeps_apex:
            return f"kept: Ascend's apex build has it on {target.name} (install that apex)"
        why = "the conversion could not rewrite this file" if mode == NATIVE else "--apex keep"
        return f"kept ({why}): apex must be installed for {target.name}, and it builds only for CUDA"
    if way == STAND_IN:
        return f"{apex.COMPAT}{api[len(apex.APEX):]}: the stand-in package (the file has a form with no confident rewrite)"
    return f"{_native_form(api)}, then migrated to {target.name}"


def _native_form(api: str) -> str:
    optimizer = api if not api.startswith("apex.optimizers.") else "apex.optimizers." + api.rsplit(".", 1)[-1]
    for table in (apex.OPTIMIZERS, apex.PARALLEL, apex.NORMALIZATION):
        if api in table or optimizer in table:
            replacement = table.get(api) or table[optimizer]
            chosen = f" ({replacement.chooses[2]} where {replacement.chooses[0]}=False)" if replacement.chooses else ""
            return replacement.native + chosen
    if api in AMP_STEPS:
        return AMP_STEPS[api]
    if api in apex.REGISTRATIONS:
        return "dropped: torch.autocast keeps op lists of its own"
    if api == apex.FP16_UTILS or api.startswith(f"{apex.FP16_UTILS}."):
        return apex.FP16_UTILS_RECIPE
    if api in MODULES:
        return (f"the module as a value (a flag, an attribute): {apex.COMPAT}{api[len(apex.APEX):]}, the stand-in, "
                "where the file keeps it; its calls as on their own lines")
    return f"{apex.COMPAT}{api[len(apex.APEX):]} (the stand-in package: no native twin)"


def apex_rows(options: engine.Options, outcome: engine.Outcome, target: Target) -> list[Finding]:
    """The rows of apex_api.csv for the files `outcome` migrated (in the order of the walk)."""
    sources, _ = engine.check_paths(options)
    ways = {name: way for way, names in outcome.apex.items() for name in names}
    mode = options.choices().apex_mode
    rows = []
    for source in sources:
        for relative in scan(source.path, options.selection).files:
            if relative.suffix != ".py":
                continue
            name = (source.prefix / relative).as_posix()
            for use in apex_uses(_read(source.base / relative)):
                tip = becomes(use.api, target, mode, ways.get(name, ""))
                rows.append(Finding(name, use.line, use.end_line, NOTE.code, Operation.NOTE, tip, api=use.api))
    return rows


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # (listed in skipped_files.csv by the migration already)
        return b""
