"""The one walk of a file for all rules (as TorchFix batches its visitors): each node's parent
recorded on the way, then every rule's `visit_<Node>` / `leave_<Node>` called."""

from __future__ import annotations

from collections import defaultdict
from typing import Callable

import libcst as cst

from torchport.migrate.rules.base.rule import Rule


class RulesPass(cst.CSTVisitor):
    """One walk of a module for all rules: records each node's parent, then calls the rules."""

    def __init__(self, rules: list[Rule], aside: set[cst.CSTNode] = frozenset()) -> None:
        super().__init__()
        self.aside = aside  # definitions visited themselves but not inside (what a set-aside one's stand-in shows)
        self.visitors: dict[str, list[Callable]] = defaultdict(list)
        self.leavers: dict[str, list[Callable]] = defaultdict(list)
        for rule in rules:
            for name in dir(type(rule)):
                if name.startswith("visit_"):
                    self.visitors[name[len("visit_") :]].append(getattr(rule, name))
                elif name.startswith("leave_"):
                    self.leavers[name[len("leave_") :]].append(getattr(rule, name))
        self.parents = rules[0].context.parents if rules else {}
        self.stack: list[cst.CSTNode] = rules[0].context.walking if rules else []

    def on_visit(self, node: cst.CSTNode) -> bool:
        stack = self.stack
        if stack:
            self.parents[node] = stack[-1]
        stack.append(node)
        if type(node) is cst.Call:  # every rule's visit_Call asks what it calls: known now, worked out once
            self.parents[node.func] = node
        for visit in self.visitors.get(type(node).__name__, ()):
            visit(node)
        return not self.aside or node not in self.aside

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass  # (LibCST looks up a visit_<Node>_<attribute> method here, for every field of every node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for leave in self.leavers.get(type(original_node).__name__, ()):
            leave(original_node)
        self.stack.pop()
