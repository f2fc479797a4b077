"""The one walk of a file for all rules (as TorchFix batches its visitors): each node's parent
recorded on the way, then every rule's `visit_<Node>` / `leave_<Node>` called.

LibCST's `visit` builds each node anew on the way back up, even for a visitor that changes
nothing. Where the module's layout is at hand (--distributed's steps hand theirs over), the walk
reads the layout's order instead, which is a visit's order: the same calls, nothing built."""

from __future__ import annotations

from collections import defaultdict
from typing import Callable

import libcst as cst

from torchport.layout import Layout
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

    def through(self, layout: Layout) -> None:
        """`layout.module.visit(self)`, read from the layout: each node visited in its order,
        and left once the nodes below it are (a node the order goes on from is not its parent)."""
        order, parents, visit, leave = layout.order, layout.parents, self.on_visit, self.on_leave
        entered: list[cst.CSTNode] = []
        at, end = 0, len(order)
        while at < end:
            node = order[at]
            above = parents.get(node)
            while entered and entered[-1] is not above:
                leave(entered.pop())
            at += 1
            if visit(node):
                entered.append(node)
                continue
            leave(node)  # (as LibCST leaves a node whose inside it does not visit)
            extent = layout.extent(node)
            if extent is not None:
                at = extent[1]
            else:
                while at < end and _below(order[at], node, parents):
                    at += 1
        while entered:
            leave(entered.pop())

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass  # (LibCST looks up a visit_<Node>_<attribute> method here, for every field of every node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for leave in self.leavers.get(type(original_node).__name__, ()):
            leave(original_node)
        self.stack.pop()


def _below(node: cst.CSTNode, above: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    while node is not None:
        node = parents.get(node)
        if node is above:
            return True
    return False
