"""Where a script makes its DataLoaders, what names each (the name it is bound to, its key in a
dict of splits, the function that returns it), and whether each trains or validates
(loader_roles.py reads the words; this module gathers them and decides for the file as a whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from torchport.distribute.edits import Read, nodes, walk

from torchport.distribute.loader_roles import TRAIN, VALIDATION, role_of_dataset, role_of_shuffle, role_of_use, role_of_words

DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


DATALOADER = "torch.utils.data.DataLoader"
ITERABLE_DATASETS = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})


_EMPTY = cst.Module([])

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, ...): where each may be given by position.


_POSITION = {"dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4}


@dataclass
class Facts:
    """What one walk of the file gives the loader step, read from the steps' shared `Read` (its
    lines, parents and names) with the scopes the step compares (`scope`)."""

    found: Read
    loaders: list[cst.Call]
    calls: list[cst.Call]
    loops: list[cst.For]
    assigns: list[cst.Assign]
    taken: set[str]  # every name and attribute name the file spells (new names avoid them)
    iterable_datasets: set[str]  # the file's classes that are IterableDatasets (no sampler can split them)
    chosen: dict = field(default_factory=dict)  # (scope, target, wanted) -> the new name given

    @classmethod
    def read(cls, found: Read) -> Facts:
        calls, loops, assigns, taken, iterable_datasets = [], [], [], set(), set()
        for node in nodes(found.module, cst.Call, cst.ClassDef, cst.For, cst.Assign, cst.Name):
            if isinstance(node, cst.Call):
                calls.append(node)
            elif isinstance(node, cst.ClassDef) and any(_is_iterable_dataset(base.value, found, iterable_datasets)
                                                        for base in node.bases):
                iterable_datasets.add(node.name.value)
            elif isinstance(node, cst.For):
                loops.append(node)
            elif isinstance(node, cst.Assign):
                assigns.append(node)
            elif isinstance(node, cst.Name):
                taken.add(node.value)
        loaders = [c for c in calls if found.qualified(c.func) & DATALOADERS]
        return cls(found, loaders, calls, loops, assigns, taken, iterable_datasets)

    @property
    def module(self) -> cst.Module:
        return self.found.module

    @property
    def parents(self) -> dict:
        return self.found.layout.parents

    def line(self, node: cst.CSTNode) -> int:
        return self.found.line(node)

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.found.line(node), self.found.end_line(node)

    def qualified_names(self, call: cst.Call) -> set[str]:
        return self.found.qualified(call.func)

    def ancestors(self, node: cst.CSTNode):
        parents = self.parents
        while node in parents:
            node = parents[node]
            yield node

    def scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The node that makes the scope `node`'s names live in, as Python scopes them: the
        module, a class body, a function or lambda (parameters and body), a comprehension (but
        its first iterable, which the scope around it evaluates)."""
        child, grandchild = node, None
        for above in self.ancestors(node):
            if isinstance(above, cst.Module):
                return above
            if isinstance(above, (cst.FunctionDef, cst.Lambda)) and (child is above.params or child is above.body):
                return above
            if isinstance(above, cst.ClassDef) and child is above.body:
                return above
            if isinstance(above, COMPREHENSIONS) and not (child is above.for_in and grandchild is above.for_in.iter):
                return above
            child, grandchild = above, child
        return child

    def enclosing_scope(self, scope: cst.CSTNode) -> cst.CSTNode | None:
        """The scope `scope` is made in (None for the module)."""
        return None if isinstance(scope, cst.Module) else self.scope(scope)

    def bindings(self, name: str, scope: cst.CSTNode) -> list[cst.Name]:
        """The `name = ...` targets (plain assignments) of `name` in `scope`, in the file's order;
        those of a function that declares the name `global` belong to the module."""
        found = []
        for node in nodes(self.module, cst.Name):
            if node.value == name and isinstance(self.parents.get(node), cst.AssignTarget):
                where = self.scope(node)
                if isinstance(where, cst.FunctionDef) and _declares(where, name, cst.Global):
                    where = self.module
                elif isinstance(where, cst.FunctionDef) and _declares(where, name, cst.Nonlocal):
                    continue
                if where is scope:
                    found.append(node)
        return found


COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _declares(function: cst.FunctionDef, name: str, kind) -> bool:
    return any(isinstance(n, kind) and any(item.name.value == name for item in n.names)
               for n in walk(function.body, into_scopes=False))


def _is_iterable_dataset(base: cst.BaseExpression, found: Read, known: set[str]) -> bool:
    if isinstance(base, cst.Name) and base.value in known:
        return True
    return bool(found.qualified(base) & ITERABLE_DATASETS)


def _is_dataloader(qualified: set[str]) -> bool:
    return bool(qualified & DATALOADERS)


@dataclass
class Split:
    """`{x: DataLoader(...) for x in ["train", "val"]}`: the comprehension, its variable, its keys."""

    comp: cst.DictComp
    var: str
    keys: list[cst.SimpleString]
    train_keys: list[cst.SimpleString] = field(default_factory=list)


@dataclass
class Site:
    """One DataLoader the script makes: where, what names it, and (decide_roles) what it is for."""

    call: cst.Call
    statement: cst.BaseStatement | None  # the statement of a block the call is made in (None: `why_not` says why)
    why_not: str
    label: str  # what names it: the name it is bound to, its key in a dict, the function that returns it
    target: cst.BaseExpression | None
    split: Split | None = None
    key: str = ""  # its key, where it is a value of a dict display (`"train"`)
    role: str = ""
    why: str = ""  # what told its role

    @property
    def name(self) -> str:
        """How the rows call it: `train_loader`, `loaders["train"]`, `self.train_loader`."""
        target = code_of(self.target) if self.target is not None else ""
        if self.key:
            return f"{target}[{self.key}]" if target else self.label
        return target or self.label or "the loader"


def site_of(call: cst.Call, facts: Facts) -> Site:
    """Where `call` is made: the statement it is in (what is put before the loader goes before it),
    what it is bound to, and why it cannot be rewritten in place where it cannot."""
    child, node = call, facts.parents.get(call)
    label, target, split, why_not, index, key = "", None, None, "", None, ""
    while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(node, cst.Element) and isinstance(facts.parents.get(node), cst.Tuple):
            index = facts.parents[node].elements.index(node) if index is None else index
        elif isinstance(node, (cst.Assign, cst.AnnAssign)) and child is node.value:
            target = _assigned(node, index)
        elif isinstance(node, cst.DictElement) and child is node.value and isinstance(node.key, cst.SimpleString):
            label, key = label or str(node.key.evaluated_value), key or node.key.value
        elif isinstance(node, cst.DictComp) and child is node.value and split is None and not why_not:
            split = _split_of(node)
            why_not = "" if split else "it is made in a comprehension over splits this step cannot read"
        elif isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            why_not = why_not or "it is made inside a lambda or a comprehension"
        elif isinstance(node, cst.IfExp) and child is not node.test or isinstance(node, cst.BooleanOperation) and child is node.right:
            why_not = why_not or "it is made only on some condition within its statement"
        elif isinstance(node, cst.Return):
            function = next((a for a in facts.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
            label = label or _without_verb(function.name.value if function else "")
        child, node = node, facts.parents.get(node)
    label = label or _label_of(target)
    statement = node if node is not None and _in_a_block(node, facts) else None
    if statement is None:
        why_not = why_not or "its statement shares a line with others"
    elif isinstance(node, cst.While):
        statement, why_not = None, why_not or "it is made in a while loop's test"
    return Site(call, statement, why_not, label, target, split, key)


def _without_verb(name: str) -> str:
    """`get_train_loader` -> `train_loader`: a function that returns a loader, named for what it returns."""
    return re.sub(r"^_*(get|make|build|create|load|init|prepare|setup|set_up)_", "", name) or name


def _assigned(assign: cst.Assign | cst.AnnAssign, index: int | None) -> cst.BaseExpression | None:
    target = assign.target if isinstance(assign, cst.AnnAssign) else assign.targets[0].target
    if isinstance(target, (cst.Tuple, cst.List)) and index is not None and index < len(target.elements):
        return target.elements[index].value
    return None if isinstance(target, (cst.Tuple, cst.List)) else target


def _label_of(target: cst.BaseExpression | None) -> str:
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    if isinstance(target, cst.Subscript):
        key = target.slice[0].slice if len(target.slice) == 1 else None
        if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
            return str(key.value.evaluated_value)
        return _label_of(target.value)
    return ""


def _split_of(comp: cst.DictComp) -> Split | None:
    """The split comprehension this step rewrites: one `for x in [literal keys]`, no `if`, keyed by x."""
    loop = comp.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(loop.target, cst.Name):
        return None
    if not (isinstance(comp.key, cst.Name) and comp.key.value == loop.target.value):
        return None
    if not isinstance(loop.iter, (cst.List, cst.Tuple)) or not all(isinstance(e.value, cst.SimpleString) for e in loop.iter.elements):
        return None
    return Split(comp, loop.target.value, [e.value for e in loop.iter.elements])


def _in_a_block(statement: cst.BaseStatement, facts: Facts) -> bool:
    parent = facts.parents.get(statement)
    if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
        return False
    return not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) == 1


def decide_roles(sites: list[Site], facts: Facts) -> None:
    for site in sites:
        if site.split is not None:
            _split_roles(site)
            continue
        site.role, site.why = _role(site, facts)
    undecided = [s for s in sites if not s.role and s.split is None]
    if len(undecided) == 1 and all(s.role == VALIDATION for s in sites if s is not undecided[0]):
        only = len(sites) == 1
        undecided[0].role = TRAIN
        undecided[0].why = "the file's only loader" if only else "the loader beside the file's validation loaders"


def _role(site: Site, facts: Facts) -> tuple[str, str]:
    said = role_of_words(site.label)
    if said:
        return said, "its name"
    dataset = argument(site.call, "dataset")
    if dataset is not None:
        said = role_of_dataset(dataset.value)
        if not said and isinstance(dataset.value, cst.Name):
            said = role_of_dataset(value_bound(dataset.value.value, site, facts) or dataset.value)
        if said:
            return said, f"its dataset, {code_of(dataset.value)}"
    shuffle = argument(site.call, "shuffle")
    if role_of_shuffle(shuffle.value if shuffle else None):
        return TRAIN, "it shuffles"
    if isinstance(site.target, cst.Name):
        said = role_of_use(facts.module, site.target.value)
        if said:
            return said, "how the script uses it"
    return "", ""


def value_bound(name: str, site: Site, facts: Facts) -> cst.BaseExpression | None:
    """The value last bound to `name` by a plain assignment before the loader, in its scope."""
    bound = facts.bindings(name, facts.scope(site.call))
    return facts.parents[facts.parents[bound[-1]]].value if bound else None


def _split_roles(site: Site) -> None:
    split = site.split
    split.train_keys = [k for k in split.keys if role_of_words(str(k.evaluated_value)) == TRAIN]
    if not split.train_keys:
        undecided = [k for k in split.keys if not role_of_words(str(k.evaluated_value))]
        split.train_keys = undecided if len(undecided) == 1 else []
    site.role = TRAIN if split.train_keys else VALIDATION
    site.why = "its keys"


def argument(call: cst.Call, name: str) -> cst.Arg | None:
    position = _POSITION.get(name)
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg
        elif not arg.star:
            if positional == position:
                return arg
            positional += 1
    return None


def double_star(call: cst.Call) -> cst.Arg | None:
    return next((a for a in call.args if a.star == "**"), None)


def dict_has_key(value: cst.BaseExpression, key: str, site: Site, facts: Facts) -> bool:
    """Whether `**value` is a name bound to a dict display (or dict(...)) with `key` in it."""
    if not isinstance(value, cst.Name):
        return False
    bound = value_bound(value.value, site, facts)
    if isinstance(bound, cst.Dict):
        return any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key
                   for e in bound.elements)
    if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value == "dict":
        return any(a.keyword is not None and a.keyword.value == key for a in bound.args)
    return False


def is_iterable_dataset(dataset: cst.BaseExpression, site: Site, facts: Facts) -> bool:
    """Whether `dataset` is made by one of the file's IterableDataset classes (directly or through a name)."""
    if isinstance(dataset, cst.Name):
        dataset = value_bound(dataset.value, site, facts) or dataset
    return isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name) and dataset.func.value in facts.iterable_datasets


def is_none(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


def is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("False", "None")


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)
