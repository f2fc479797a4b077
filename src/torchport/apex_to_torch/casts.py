"""amp's control of casts: `with amp.disable_casts():` -> autocast off for the block; the O1
function registrations (`amp.register_half_function(torch, "einsum")`, `@amp.half_function`)
dropped: native autocast keeps its own lists of what runs in float16."""

from __future__ import annotations

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch.changes import AMP_INITIALIZE
from torchport.apex_to_torch.references import uses
from torchport.apex_to_torch.reading import read
from torchport.distribute.changes import Change
from torchport.distribute.edits import Edits, Read, code
from torchport.findings import Operation

CASTS_OFF = 'torch.amp.autocast("cuda", enabled=False)'


def rewrite_casts(text: str, plan) -> tuple[str, list[Change]]:
    found = read(text)
    edits, changes = Edits(), []
    for use in uses(found):
        line = found.line(use.node)
        if use.api == apex.DISABLE_CASTS:
            edits.replace(use.call, cst.parse_expression(CASTS_OFF))
            plan.needs.add("torch")
            changes.append(Change(line, line, AMP_INITIALIZE.code, Operation.MODIFY, f"amp.disable_casts() -> {CASTS_OFF}",
                                  use.api))
        elif use.api in apex.REGISTRATIONS:
            parent = found.parent(use.call if use.call is not None else use.node)
            if isinstance(parent, cst.Decorator):
                function = found.parent(parent)
                edits.replace(function, function.with_changes(
                    decorators=[d for d in function.decorators if d is not parent]))
            else:
                edits.remove(found.statement_of(use.node))
            changes.append(Change(line, line, AMP_INITIALIZE.code, Operation.DELETE,
                                  f"{code(use.call or use.node)} dropped: native autocast keeps its own lists of "
                                  "what runs in float16 and float32", use.api))
    return edits.apply(found), changes
