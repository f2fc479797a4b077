"""What the amp conversion of one file will write, decided once before any step edits: the
scaler's name and how it is made, where it lives, whether the forward pass runs under autocast
and under which condition. Deciding here is what keeps a file from being half-rewritten: any form
found unconvertible stops the conversion before the first edit."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchport.apis import apex
from torchport.apex_to_torch import initialize
from torchport.apex_to_torch.changes import Unconvertible
from torchport.apex_to_torch.references import NEEDS_SCALER, Use
from torchport.distribute.edits import Read, code, walk

SCALER_NAMES = ("scaler", "grad_scaler", "amp_scaler")


@dataclass
class Plan:
    scaler: str = ""  # the GradScaler's name ("": the file makes none)
    scaler_call: str = ""  # `torch.amp.GradScaler("cuda", ...)`
    at_module: bool = False  # made at the module's top: its uses are in other functions than initialize's
    autocast: bool = False  # the forward pass runs under autocast (O1, O2)
    condition: str | None = None  # the code amp is on under (`args.fp16`); None: always
    models: tuple[str, ...] = ()  # the names initialize binds the models to
    imports: dict[str, set[str]] = field(default_factory=dict)  # apex alias -> the native names that replace it
    needs: set[str] = field(default_factory=set)  # modules the written code reads ("torch", "torchport.optim")
    keep: tuple[str, ...] = ()  # the apex names left as written (the target's own apex build has them)

    def converts(self, api: str) -> bool:
        """Whether the apex name `api` is rewritten (not one the target's apex build keeps)."""
        return not apex.in_build(api, self.keep)


def make(found: Read, used: list[Use]) -> Plan:
    init = initialize.find(found, used)
    scaled = [u for u in used if u.api in NEEDS_SCALER]
    if init is None:
        if scaled:
            raise Unconvertible(found.line(scaled[0].node), f"{code(scaled[0].node)} without amp.initialize in this "
                                                            "file: the GradScaler it stands for has no home here")
        return Plan()
    if not any(u.api == apex.SCALE_LOSS for u in scaled):
        raise Unconvertible(found.line(init.call), "amp.initialize without amp.scale_loss in this file: the loss is "
                                                   "scaled elsewhere (a library's scaler)")
    guard = initialize.condition(init)
    plan = Plan(scaler=_free_name(found), scaler_call=initialize.scaler_call(init), autocast=initialize.autocasts(init),
                condition=None if guard is None else code(guard),
                models=tuple(code(m) for m in init.model_targets))
    plan.at_module = _at_module(found, init, scaled, guard)
    return plan


def _at_module(found: Read, init: initialize.Initialize, scaled: list[Use], guard) -> bool:
    """Whether the scaler must be made at the module's top: uses in other functions than the one
    initialize is in (made where initialize was, it would not be seen there)."""
    home = found.scope_of(init.call)
    line = found.line(init.call)
    elsewhere = [u for u in scaled if found.scope_of(u.node) is not home]
    before = [u for u in scaled if found.scope_of(u.node) is home and found.line(u.node) < line]
    if before:
        raise Unconvertible(found.line(before[0].node), f"{code(before[0].node)} before amp.initialize (line {line})")
    if not elsewhere or isinstance(home, cst.Module):
        return False
    if guard is not None:
        use = elsewhere[0]
        raise Unconvertible(found.line(use.node), f"{code(use.node)} is in another function than amp.initialize "
                                                  f"(line {line}), which runs under `{code(guard)}`: a scaler made "
                                                  "there would not be seen here")
    return True


def _free_name(found: Read) -> str:
    taken = {n.value for n in found.walk(found.module) if isinstance(n, cst.Name)}
    for name in SCALER_NAMES:
        if name not in taken:
            return name
    raise Unconvertible(1, f"the names {', '.join(SCALER_NAMES)} are all taken in this file")
