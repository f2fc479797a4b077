"""A DistributedSampler on the training loaders, set_epoch in the epoch loop, the batch split (or
the learning rate scaled).

Each training loader gets the ImageNet example's idiom, so that a run without a launcher
(WORLD_SIZE 1) reads its data exactly as before:

    train_sampler = torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True) if WORLD_SIZE > 1 else None
    train_loader = DataLoader(train_set, batch_size=64 // WORLD_SIZE, shuffle=(train_sampler is None), sampler=train_sampler)

A dataset given as a call is bound to a name first, so it is built once for both. A dict of
splits built by a comprehension (`{x: DataLoader(sets[x], ...) for x in ["train", "val"]}`) gets
a dict of samplers beside it, a sampler for the training split only. Validation loaders are left
whole (each process evaluates the whole set), as is a loader with its own sampler: both get a
row saying so. The batch: by default the global batch is kept (each process takes
batch // WORLD_SIZE); with `--distributed-batch per-rank` the batch is kept per process and the
optimizer's learning rate is scaled by WORLD_SIZE instead (learning_rate.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    GlobalScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from torchport.distribute import epochs, learning_rate
from torchport.distribute.changes import Change
from torchport.distribute.loader_roles import TRAIN, VALIDATION, role_of_dataset, role_of_shuffle, role_of_use, role_of_words
from torchport.distribute.names import SAMPLER, WORLD_SIZE
from torchport.findings import Operation

CODE, BATCH_CODE = "TP202", "TP206"
DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DATALOADER = "torch.utils.data.DataLoader"
_EMPTY = cst.Module([])

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, ...): where each may be given by position.
_POSITION = {"dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4}


def shard_loaders(source: str, plan, options) -> tuple[str, list[Change]]:
    """`source` with its training loaders sharded across the processes (module docstring)."""
    try:
        facts = _Facts.read(MetadataWrapper(cst.parse_module(source)))
    except Exception:  # (LibCST's scope analysis fails on some odd code: such a file is left as it is)
        return source, []
    edits = _Edits()
    sites = [_site(call, facts) for call in facts.loaders]
    _decide_roles(sites, facts)
    samplers = []
    for site in sites:
        samplers += _shard(site, facts, options, edits)
    epochs.add_set_epoch(facts, samplers, sites_rewritten=bool(samplers) or not sites, edits=edits)
    if options.batch == "per-rank":
        learning_rate.scale(facts, edits)
    if not edits.changes_code:
        return source, edits.changes
    module = facts.module.visit(_Apply(edits))
    if edits.needs_torch and not _binds_torch(module):
        module = _with_import_torch(module)
    return module.code, sorted(edits.changes, key=lambda c: (c.start_line, c.code))


# -- what the file says ------------------------------------------------------------------------------


@dataclass
class _Facts:
    module: cst.Module
    parents: dict
    positions: dict
    scopes: dict
    qualified: dict
    loaders: list[cst.Call]
    calls: list[cst.Call]
    loops: list[cst.For]
    assigns: list[cst.Assign]
    taken: set[str]  # every name and attribute name the file spells (new names avoid them)

    @classmethod
    def read(cls, wrapper: MetadataWrapper) -> _Facts:
        reader = _Reader()
        wrapper.visit(reader)
        return cls(wrapper.module, reader.parents, reader.positions, reader.scopes, reader.qualified,
                   [c for c in reader.calls if _is_dataloader(reader.qualified.get(c, ()))], reader.calls, reader.loops,
                   reader.assigns, reader.taken)

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return where.start.line, where.end.line

    def qualified_names(self, call: cst.Call) -> set[str]:
        return self.qualified.get(call, set())

    def ancestors(self, node: cst.CSTNode):
        while node in self.parents:
            node = self.parents[node]
            yield node


class _Reader(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (ParentNodeProvider, PositionProvider, ScopeProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        super().__init__()
        self.parents, self.positions, self.scopes, self.qualified = {}, {}, {}, {}
        self.calls, self.loops, self.assigns, self.taken = [], [], [], set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if parent is not None:
            self.parents[node] = parent
        self.positions[node] = self.get_metadata(PositionProvider, node)
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is not None:
            self.scopes[node] = scope
        if isinstance(node, cst.Call):
            self.calls.append(node)
            self.qualified[node] = {q.name for q in self.get_metadata(QualifiedNameProvider, node.func, set())}
        elif isinstance(node, cst.For):
            self.loops.append(node)
        elif isinstance(node, cst.Assign):
            self.assigns.append(node)
        elif isinstance(node, cst.Name):
            self.taken.add(node.value)
        return True


def _is_dataloader(qualified: set[str]) -> bool:
    return bool(qualified & DATALOADERS)


# -- where each loader is made, and what names it ----------------------------------------------------


@dataclass
class _Split:
    """`{x: DataLoader(...) for x in ["train", "val"]}`: the comprehension, its variable, its keys."""

    comp: cst.DictComp
    var: str
    keys: list[cst.SimpleString]
    train_keys: list[cst.SimpleString] = field(default_factory=list)


@dataclass
class _Site:
    call: cst.Call
    statement: cst.BaseStatement | None  # the statement of a block the call is made in (None: `why_not` says why)
    why_not: str
    label: str  # what names it: the name it is bound to, its key in a dict, the function that returns it
    target: cst.BaseExpression | None
    split: _Split | None = None
    key: str = ""  # its key, where it is a value of a dict display (`"train"`)
    role: str = ""
    why: str = ""  # what told its role

    @property
    def name(self) -> str:
        """How the rows call it: `train_loader`, `loaders["train"]`, `self.train_loader`."""
        target = _source(self.target) if self.target is not None else ""
        if self.key:
            return f"{target}[{self.key}]" if target else self.label
        return target or self.label or "the loader"


def _site(call: cst.Call, facts: _Facts) -> _Site:
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
    return _Site(call, statement, why_not, label, target, split, key)


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


def _split_of(comp: cst.DictComp) -> _Split | None:
    """The split comprehension this step rewrites: one `for x in [literal keys]`, no `if`, keyed by x."""
    loop = comp.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(loop.target, cst.Name):
        return None
    if not (isinstance(comp.key, cst.Name) and comp.key.value == loop.target.value):
        return None
    if not isinstance(loop.iter, (cst.List, cst.Tuple)) or not all(isinstance(e.value, cst.SimpleString) for e in loop.iter.elements):
        return None
    return _Split(comp, loop.target.value, [e.value for e in loop.iter.elements])


def _in_a_block(statement: cst.BaseStatement, facts: _Facts) -> bool:
    parent = facts.parents.get(statement)
    if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
        return False
    return not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) == 1


# -- training or validation --------------------------------------------------------------------------


def _decide_roles(sites: list[_Site], facts: _Facts) -> None:
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


def _role(site: _Site, facts: _Facts) -> tuple[str, str]:
    said = role_of_words(site.label)
    if said:
        return said, "its name"
    dataset = _argument(site.call, "dataset")
    if dataset is not None:
        said = role_of_dataset(dataset.value)
        if not said and isinstance(dataset.value, cst.Name):
            said = role_of_dataset(_value_bound(dataset.value.value, site, facts) or dataset.value)
        if said:
            return said, f"its dataset, {_source(dataset.value)}"
    shuffle = _argument(site.call, "shuffle")
    if role_of_shuffle(shuffle.value if shuffle else None):
        return TRAIN, "it shuffles"
    if isinstance(site.target, cst.Name):
        said = role_of_use(facts.module, site.target.value)
        if said:
            return said, "how the script uses it"
    return "", ""


def _value_bound(name: str, site: _Site, facts: _Facts) -> cst.BaseExpression | None:
    """The value last bound to `name` by a plain assignment before the loader, in its scope."""
    scope = facts.scopes.get(site.call)
    if scope is None or name not in scope.assignments:
        return None
    before = [a.node for a in scope.assignments[name] if isinstance(a.node, cst.Name)]
    for node in reversed(before):
        assign = facts.parents.get(node)
        if isinstance(assign, cst.AssignTarget):
            return facts.parents[assign].value
    return None


def _split_roles(site: _Site) -> None:
    split = site.split
    split.train_keys = [k for k in split.keys if role_of_words(str(k.evaluated_value)) == TRAIN]
    if not split.train_keys:
        undecided = [k for k in split.keys if not role_of_words(str(k.evaluated_value))]
        split.train_keys = undecided if len(undecided) == 1 else []
    site.role = TRAIN if split.train_keys else VALIDATION
    site.why = "its keys"


# -- the rewrite of one loader -----------------------------------------------------------------------


@dataclass
class SamplerMade:
    """A sampler this step made: how code reads it, and where it is bound."""

    expr: str  # `train_sampler`, `self.train_sampler`, `samplers["train"]`
    statement: cst.BaseStatement  # the loader's statement (the sampler is bound just before it)
    shuffles: bool  # False when the loader never shuffled (set_epoch then changes nothing)
    site_line: int


@dataclass
class _Edits:
    calls: dict = field(default_factory=dict)  # original Call -> new Call
    before: dict = field(default_factory=dict)  # original statement -> statements put above it
    first_in: dict = field(default_factory=dict)  # original For -> statements put first in its body
    changes: list[Change] = field(default_factory=list)
    needs_torch: bool = False

    @property
    def changes_code(self) -> bool:
        return bool(self.calls or self.before or self.first_in)

    def row(self, facts: _Facts, node: cst.CSTNode, code: str, operation: Operation, message: str, api: str = DATALOADER) -> None:
        start, end = facts.lines(node)
        self.changes.append(Change(start, end, code, operation, message, api))


def _shard(site: _Site, facts: _Facts, options, edits: _Edits) -> list[SamplerMade]:
    name = site.name
    where = site.statement or site.call
    if site.role == VALIDATION:
        edits.row(facts, where, CODE, Operation.NOTE,
                  f"{name}: a validation loader ({site.why}), left whole: each process evaluates the whole set")
        return []
    if site.role != TRAIN:
        edits.row(facts, where, CODE, Operation.NOTE,
                  f"{name}: left whole, nothing says whether it trains or validates; a training loader needs "
                  f"sampler={SAMPLER}(its dataset) so that each process reads its own part")
        return []
    own = _argument(site.call, "sampler") or _argument(site.call, "batch_sampler")
    if own is not None and not _is_none(own.value):
        edits.row(facts, where, CODE, Operation.NOTE,
                  f"{name} has its own sampler ({_source(own.value)}): kept, and its batch too; every process "
                  f"reads all it gives unless it splits by rank (torch.distributed.get_rank())")
        return []
    if site.why_not or _argument(site.call, "dataset") is None:
        edits.row(facts, where, CODE, Operation.NOTE,
                  f"{name}: a training loader left whole, {site.why_not or 'its dataset is not given by name or position'}; "
                  f"give it sampler={SAMPLER}(its dataset) (shuffle moved into the sampler)")
        return []
    edits.needs_torch = True
    if site.split is not None:
        return _shard_split(site, facts, options, edits)
    return [_shard_one(site, facts, options, edits)]


def _shard_one(site: _Site, facts: _Facts, options, edits: _Edits) -> SamplerMade:
    call, hoisted = site.call, []
    sampler = _fresh(_renamed(site.label, "sampler", "train_sampler"), site.target, facts)
    dataset = _argument(call, "dataset").value
    if not _cheap(dataset):  # (built once, for the sampler and the loader both)
        name = _fresh(_renamed(site.label, "dataset", "train_dataset"), None, facts)
        hoisted.append(cst.parse_statement(f"{name} = {_source(dataset)}"))
        dataset = cst.Name(name)
    shuffle, kwargs = _argument(call, "shuffle"), _double_star(call)
    if shuffle is None and kwargs is not None:
        order = f'{_source(kwargs.value)}.get("shuffle", False)'
    else:
        order = "False" if shuffle is None or _is_none(shuffle.value) else _source(shuffle.value)
    hoisted.append(cst.parse_statement(f"{sampler} = {SAMPLER}({_source(dataset)}, shuffle={order}) if {WORLD_SIZE} > 1 else None"))
    new = _with_value(call, "dataset", dataset)
    new = _with_shuffle_and_sampler(new, shuffle, kwargs, sampler)
    new = _with_batch(new, site, facts, options, edits, sampler, kwargs)
    edits.calls[call] = new
    edits.before[site.statement] = hoisted
    edits.row(facts, site.statement, CODE, Operation.INSERT,
              f"{sampler}: a DistributedSampler on {site.name} (training: {site.why}), the shuffle moved into it: "
              f"each process reads its own 1/{WORLD_SIZE} of the set (a set whose length is no multiple of {WORLD_SIZE} "
              f"has a few samples repeated to even the parts); without a launcher ({WORLD_SIZE} 1) it reads the whole set as before")
    return SamplerMade(sampler, site.statement, order != "False", facts.line(site.statement))


def _with_shuffle_and_sampler(call: cst.Call, shuffle: cst.Arg | None, kwargs: cst.Arg | None, sampler: str) -> cst.Call:
    no_sampler = f"{sampler} is None"
    if shuffle is None and kwargs is not None:  # (the shuffle, if any, is in the dict: off where the sampler shuffles)
        star = _source(kwargs.value)
        spread = _expr(f'dict({star}, shuffle={star}.get("shuffle", False) and {no_sampler})')
        call = _replace_arg(call, _double_star(call), _double_star(call).with_changes(value=spread))
    elif shuffle is not None and not _is_false(shuffle.value):
        current = _argument(call, "shuffle")
        call = _replace_arg(call, current, current.with_changes(value=_and_no_sampler(shuffle.value, no_sampler)))
    positional = _argument(call, "sampler")
    if positional is not None:  # (`None` given by position: ours takes its place)
        return _replace_arg(call, positional, positional.with_changes(value=_expr(sampler)))
    return _add_keyword(call, "sampler", _expr(sampler), after=_argument(call, "shuffle"))


def _and_no_sampler(value: cst.BaseExpression, no_sampler: str) -> cst.BaseExpression:
    if isinstance(value, cst.Name) and value.value == "True":
        return _expr(f"({no_sampler})")
    if not value.lpar and not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison, cst.UnaryOperation)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=value, operator=cst.And(), right=_expr(no_sampler))


def _with_batch(call, site, facts, options, edits, sampler: str, kwargs: cst.Arg | None, only_when: str = "") -> cst.Call:
    """The batch split across the processes (global batch kept), or kept per process (per-rank)."""
    batch = _argument(call, "batch_size")
    name = site.name
    if options.batch == "per-rank":
        kept = _source(batch.value) if batch is not None else "1 (the default)"
        edits.row(facts, site.statement, BATCH_CODE, Operation.NOTE,
                  f"{name}: batch_size {kept} kept on each process (--distributed-batch per-rank): the global batch is "
                  f"{WORLD_SIZE} times larger, the learning rate scaled to match", api="")
        return call
    if batch is None and kwargs is not None and _dict_has_key(kwargs.value, "batch_size", site, facts):
        star = _double_star(call)
        spread = star.value  # dict(kw, shuffle=...) made above, or the bare name
        per_process = _expr(f'{_source(kwargs.value)}["batch_size"] // {WORLD_SIZE}')
        if isinstance(spread, cst.Call):
            spread = _add_keyword(spread, "batch_size", per_process)
        else:
            spread = _expr(f"dict({_source(spread)}, batch_size={_source(per_process)})")
        edits.row(facts, site.statement, BATCH_CODE, Operation.MODIFY,
                  f"{name}: the batch size in **{_source(kwargs.value)} split across the processes ({WORLD_SIZE} of them "
                  f"take batch_size // {WORLD_SIZE} each): the global batch stays the script's", api="")
        return _replace_arg(call, star, star.with_changes(value=spread))
    if batch is None or _is_none(batch.value):
        what = "no batch_size (1 a process)" if batch is None else "batch_size=None (no batching)"
        edits.row(facts, site.statement, BATCH_CODE, Operation.NOTE,
                  f"{name}: {what}, not split: each process reads its own samples, the global batch is {WORLD_SIZE} of them", api="")
        return call
    split = _expr(f"{_operand(batch.value)} // {WORLD_SIZE}")
    if only_when:
        split = cst.IfExp(test=_expr(only_when), body=split, orelse=batch.value)
    if only_when:
        name = f"the training split of {name}"
    edits.row(facts, site.statement, BATCH_CODE, Operation.MODIFY,
              f"{name}: batch_size {_source(batch.value)} -> {_source(batch.value)} // {WORLD_SIZE} on each process, so the "
              f"global batch stays {_source(batch.value)} and N cards train as one did (exact where it is a multiple of "
              f"{WORLD_SIZE}); --distributed-batch per-rank keeps it per process and scales the learning rate instead", api="")
    return _replace_arg(call, batch, batch.with_changes(value=split))


def _shard_split(site: _Site, facts: _Facts, options, edits: _Edits) -> list[SamplerMade]:
    split, call, hoisted = site.split, site.call, []
    var, keys = split.var, split.train_keys
    loop = f"for {var} in {_source(split.comp.for_in.iter)}"
    label = site.label or "loaders"
    is_train = f"{var} == {keys[0].value}" if len(keys) == 1 else f"{var} in ({', '.join(k.value for k in keys)})"
    samplers = _fresh(_renamed(label, "sampler", "samplers", plural=True), site.target, facts)
    dataset = _argument(call, "dataset").value
    if not _cheap(dataset):
        datasets = _fresh(_renamed(label, "dataset", "datasets", plural=True), None, facts)
        hoisted.append(cst.parse_statement(f"{datasets} = {{{var}: {_source(dataset)} {loop}}}"))
        dataset = _expr(f"{datasets}[{var}]")
    shuffle = _argument(call, "shuffle")
    order = "False" if shuffle is None or _is_none(shuffle.value) else _source(shuffle.value)
    hoisted.append(cst.parse_statement(
        f"{samplers} = {{{var}: {SAMPLER}({_source(dataset)}, shuffle={order}) if {WORLD_SIZE} > 1 and {is_train} else None {loop}}}"))
    mine = f"{samplers}[{var}]"
    new = _with_value(call, "dataset", dataset)
    new = _with_shuffle_and_sampler(new, shuffle, None, mine)
    new = _with_batch(new, site, facts, options, edits, mine, None, only_when=is_train)
    edits.calls[call] = new
    edits.before[site.statement] = hoisted
    names = ", ".join(str(k.evaluated_value) for k in keys)
    edits.row(facts, site.statement, CODE, Operation.INSERT,
              f"{samplers}: a DistributedSampler for the training split ({names}) of {site.name}, the others left whole "
              f"(each process evaluates them whole); the shuffle moved into the sampler; without a launcher every split reads as before")
    return [SamplerMade(f"{samplers}[{k.value}]", site.statement, order != "False", facts.line(site.statement)) for k in keys]


# -- small readings and writings of the code ---------------------------------------------------------


def _argument(call: cst.Call, name: str) -> cst.Arg | None:
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


def _double_star(call: cst.Call) -> cst.Arg | None:
    return next((a for a in call.args if a.star == "**"), None)


def _dict_has_key(value: cst.BaseExpression, key: str, site: _Site, facts: _Facts) -> bool:
    """Whether `**value` is a name bound to a dict display (or dict(...)) with `key` in it."""
    if not isinstance(value, cst.Name):
        return False
    bound = _value_bound(value.value, site, facts)
    if isinstance(bound, cst.Dict):
        return any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key
                   for e in bound.elements)
    if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value == "dict":
        return any(a.keyword is not None and a.keyword.value == key for a in bound.args)
    return False


def _with_value(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    arg = _argument(call, name)
    return call if arg.value is value else _replace_arg(call, arg, arg.with_changes(value=value))


def _replace_arg(call: cst.Call, old: cst.Arg, new: cst.Arg) -> cst.Call:
    return call.with_changes(args=[new if a is old else a for a in call.args])


def _add_keyword(call: cst.Call, name: str, value: cst.BaseExpression, after: cst.Arg | None = None) -> cst.Call:
    """`call` with `name=value` after `after` (else last), the call's own line breaks kept."""
    args = list(call.args)
    new = cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    at = args.index(after) + 1 if after is not None and after in args else len(args)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if at < len(args):  # (it takes the comma, and the line break, of the argument before it)
        new = new.with_changes(comma=args[at - 1].comma if at else comma)
        if at:
            args[at - 1] = args[at - 1].with_changes(comma=comma)
    elif args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):  # (a trailing comma stays trailing)
            new = new.with_changes(comma=last.comma)
        args[-1] = last.with_changes(comma=comma)
    args.insert(at, new)
    return call.with_changes(args=args)


def _cheap(expr: cst.BaseExpression) -> bool:
    """A dataset spelled by a name (`train_set`, `self.train_set`, `sets["train"]`, `sets[x]`):
    read twice it is the same object, so it is not bound to a new name."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _cheap(expr.value)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
        return _cheap(expr.value) and isinstance(key, (cst.Name, cst.SimpleString, cst.Integer))
    return False


def _renamed(label: str, kind: str, fallback: str, plural: bool = False) -> str:
    """`train_loader` -> `train_sampler`, `dataloaders` -> `samplers`, `train` (a key) -> `train_sampler`."""
    if not label:
        return fallback
    if re.search("loader", label, re.I):
        renamed = re.sub(r"(?i)(data)?loader", kind, label)
        return fallback if renamed.lower() in (kind, kind + "s") and not plural else renamed
    return f"{label}_{kind}s" if plural else f"{label}_{kind}"


def _fresh(wanted: str, target: cst.BaseExpression | None, facts: _Facts) -> str:
    """`wanted`, or `wanted_2`, ... where the file already spells it; `self.` + it where the loader
    is bound to an attribute (so that the class's other methods see it)."""
    name, number = wanted, 2
    while name in facts.taken:
        name, number = f"{wanted}_{number}", number + 1
    facts.taken.add(name)
    if isinstance(target, cst.Attribute):
        return f"{_source(target.value)}.{name}"
    return name


def _operand(value: cst.BaseExpression) -> str:
    """`value` as the left operand of `//` (in parentheses where it needs them)."""
    text = _source(value)
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer)
    return text if isinstance(value, simple) or value.lpar else f"({text})"


def _is_none(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


def _is_false(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("False", "None")


def _source(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _binds_torch(module: cst.Module) -> bool:
    for line in module.body:
        if isinstance(line, cst.SimpleStatementLine):
            for stmt in line.body:
                if isinstance(stmt, cst.Import) and any(a.asname is None and _source(a.name).split(".")[0] == "torch" for a in stmt.names):
                    return True
    return False


def _with_import_torch(module: cst.Module) -> cst.Module:
    """`import torch` above the first top-level import from torch (else after the last import)."""
    body = list(module.body)
    imports = [i for i, line in enumerate(body) if isinstance(line, cst.SimpleStatementLine)
               and isinstance(line.body[0], (cst.Import, cst.ImportFrom))
               and not (isinstance(line.body[0], cst.ImportFrom) and _source(line.body[0].module or cst.Name("")) == "__future__")]
    torch_imports = [i for i in imports if isinstance(body[i].body[0], cst.ImportFrom)
                     and _source(body[i].body[0].module or cst.Name("")).split(".")[0] == "torch"]
    if torch_imports:
        at = torch_imports[0]
        body.insert(at, cst.parse_statement("import torch").with_changes(leading_lines=body[at].leading_lines))
        body[at + 1] = body[at + 1].with_changes(leading_lines=[])
    else:
        body.insert(imports[-1] + 1 if imports else 0, cst.parse_statement("import torch"))
    return module.with_changes(body=body)


class _Apply(cst.CSTTransformer):
    """The edits, at the nodes of the module they were planned on."""

    def __init__(self, edits: _Edits) -> None:
        super().__init__()
        self.edits = edits

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        new = self.edits.calls.get(original)
        return updated if new is None else new

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        first = self.edits.first_in.get(original)
        if first and isinstance(updated, cst.For):
            updated = updated.with_changes(body=_prepended(updated.body, first))
        above = self.edits.before.get(original)
        if above and isinstance(updated, cst.BaseStatement):
            lead = above[0].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([lead, *above[1:], updated.with_changes(leading_lines=[])])
        return updated


def _prepended(body: cst.BaseSuite, statements: list[cst.BaseStatement]) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body.with_changes(body=[*statements, *body.body])
    lines = [cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body])]
    return cst.IndentedBlock(body=[*statements, *lines])
