"""TP004: `torch.cuda.*` APIs, per the target's verdict."""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from torchport.migrate.findings import Operation
from torchport.migrate.rules.base import ApiReferenceRule, Rule, parse_expression
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind, Verdict

AMP = "torch.cuda.amp"


@lru_cache(maxsize=None)
def known_cuda_apis() -> frozenset[str]:
    return frozenset(cuda_apis())


def sole_statement(rule: Rule, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The statement line that consists of nothing but `call`, if there is one."""
    expr = rule.parent(call)
    if not isinstance(expr, cst.Expr):
        return None
    line = rule.parent(expr)
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return line
    return None


class CudaApiRule(ApiReferenceRule):
    """Rewrite `torch.cuda.<api>` (however it was imported) as the target's verdict says.

    same/adapted: call the replacement (guarded where the target may have no device);
    no-op: drop the statement, or use the verdict's value where the result is used;
    unsupported: leave it and report it; names no verdict knows: leave and report as unknown.
    AMP (`torch.cuda.amp.*`) and timing events have rules of their own.
    """

    code = "TP004"
    title = "torch.cuda APIs"
    prefix = "torch.cuda."
    reads = (prefix,)

    def visit_api(self, node: cst.BaseExpression, api: str) -> None:
        if api.startswith(AMP):
            return  # AmpRule
        if api not in known_cuda_apis():
            self.report(node, Operation.UNKNOWN, f"{api} is not a public torch.cuda API; left as is", api=api)
            return
        if api == "torch.cuda.Event" and self.target.host_timing:
            return  # HostTimingRule
        verdict = self.target.verdict(api)
        parent = self.parent(node)
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        if verdict.kind is Kind.UNSUPPORTED:
            self.report(node, Operation.UNSUPPORTED, verdict.note, api=api)
        elif verdict.kind is Kind.NOOP:
            self._drop(node, call, verdict)
        elif call is not None:
            self._redirect_call(call, verdict)
        else:
            replacement = verdict.replacement
            self.change(node, lambda _: parse_expression(replacement), verdict.describe(), api=api, needs=replacement)

    def _drop(self, node: cst.BaseExpression, call: cst.Call | None, verdict: Verdict) -> None:
        if call is None:
            self.report(node, Operation.UNSUPPORTED, f"{verdict.api} is a no-op on {self.target.name}: {verdict.note}", api=verdict.api)
            return
        line = sole_statement(self, call)
        if line is not None:
            self.change(line, lambda _: cst.RemoveFromParent(), verdict.describe(), operation=Operation.DELETE, api=verdict.api)
            return
        value = verdict.value if verdict.value is not None else "None"
        self.change(call, lambda _: parse_expression(value), verdict.describe(), api=verdict.api, needs=value)

    def _redirect_call(self, call: cst.Call, verdict: Verdict) -> None:
        replacement = parse_expression(verdict.replacement)

        def redirected(updated: cst.Call) -> cst.Call:
            new = updated.with_changes(func=replacement)
            return new.with_changes(args=[]) if verdict.drop_args else new

        if verdict.guard is None:
            self.change(call, redirected, verdict.describe(), api=verdict.api, needs=verdict.replacement)
            return
        line = sole_statement(self, call)
        guard = parse_expression(verdict.guard)
        needs = f"{verdict.replacement} {verdict.guard} {verdict.value or ''}"
        if line is not None:
            self.change(call, redirected, verdict.describe(), api=verdict.api, needs=needs)

            def guarded_statement(updated: cst.SimpleStatementLine) -> cst.If:
                inner = updated.with_changes(leading_lines=[])
                return cst.If(test=guard, body=cst.IndentedBlock([inner]), leading_lines=updated.leading_lines)

            self.context.fixes[line].append(guarded_statement)
            return
        fallback = parse_expression(verdict.value if verdict.value is not None else "None")

        def guarded_expression(updated: cst.Call) -> cst.IfExp:
            return cst.IfExp(
                test=guard,
                body=redirected(updated),
                orelse=fallback,
                lpar=[cst.LeftParen()],
                rpar=[cst.RightParen()],
            )

        self.change(call, guarded_expression, verdict.describe(), api=verdict.api, needs=needs)
