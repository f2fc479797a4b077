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
from dataclasses import dataclass, replace

import libcst as cst

from torchport.distribute import batch_reads, epochs, learning_rate
from torchport.distribute.changes import BATCH_SIZE, LOADERS, Change
from torchport.distribute.loader_edits import Apply, Edits, add_keyword, binds_torch, replace_arg, with_import_torch, with_value
from torchport.distribute.edits import Read, on_the_way
from torchport.distribute.loader_roles import TRAIN, VALIDATION
from torchport.distribute.loader_sites import (
    Facts, Site, argument, code_of, decide_roles, dict_has_key, double_star, expr, is_false, is_iterable_dataset, is_none, site_of,
)
from torchport.distribute.names import SAMPLER, WORLD_SIZE
from torchport.findings import Operation

_LOADERS_SPELLED = re.compile(r"loader|dl\b", re.I)


def shard_loaders(source: str, plan, options) -> tuple[str, list[Change]]:
    """`source` with its training loaders sharded across the processes (module docstring)."""
    if not _LOADERS_SPELLED.search(source) and not (options.batch == "per-rank" and "optim" in source):
        return source, [_no_loader()]  # (the scope analysis below costs more than the parse)
    if getattr(plan, "unwrapped", ""):  # (a step run alone, in tests, has no plan)
        return source, [_left_whole(plan.unwrapped)]
    found = Read.of(source)
    facts = Facts.read(found)
    edits = Edits()
    sites = [site_of(call, facts) for call in facts.loaders]
    decide_roles(sites, facts)
    options = _batch_mode(sites, facts, options, edits)
    samplers = []
    for site in sites:
        samplers += _shard(site, facts, options, edits)
    epochs.add_set_epoch(facts, samplers, sites_rewritten=bool(samplers) or not sites, edits=edits)
    if options.batch == "per-rank":
        learning_rate.scale(facts, edits)
    if not edits.changes_code:
        return source, edits.changes
    module = facts.module.visit(Apply(edits, on_the_way(found, [*edits.calls, *edits.before, *edits.first_in])))
    if edits.needs_torch and not binds_torch(module):
        module = with_import_torch(module)
    return found.edited(module), sorted(edits.changes, key=lambda c: (c.start_line, c.code))


def _batch_mode(sites: list[Site], facts: Facts, options, edits: Edits):
    """`options`, or per-rank where other code reads a training loader's batch size (batch_reads.py)."""
    if options is None or options.batch != "global":
        return options
    for site in sites:
        batch = argument(site.call, "batch_size") if site.role == TRAIN else None
        why = batch_reads.read_elsewhere(facts.module, site.call, batch.value) if batch is not None else ""
        if why:
            edits.row(facts, site.statement or site.call, BATCH_SIZE.code, Operation.NOTE,
                      f"{site.name}: batch_size {code_of(batch.value)} kept on each process, not split: {why}, which "
                      f"would otherwise believe in a batch no process sees; the global batch is {WORLD_SIZE} times it "
                      "and the learning rate is scaled by WORLD_SIZE with it (as --distributed-batch per-rank)", api="")
            return replace(options, batch="per-rank")
    return options


def _no_loader() -> Change:
    return Change(1, 1, LOADERS.code, Operation.NOTE,
                  "no DataLoader: the data is read another way (a tensor batched by hand, a generator), so every "
                  "process trains on all of it, WORLD_SIZE times the data an epoch; shard it by hand by RANK and "
                  "WORLD_SIZE (the batches data[RANK::WORLD_SIZE]), or read it through a DataLoader with a "
                  "DistributedSampler")


def _left_whole(why: str) -> Change:
    return Change(1, 1, LOADERS.code, Operation.NOTE,
                  f"no DistributedSampler and no batch split: {why}, and N processes would train N models apart, "
                  "each on its own 1/N of the data; each process reads the whole set until the model is wrapped "
                  "by hand (then add DistributedSampler to the training loader)")


@dataclass
class SamplerMade:
    """A sampler this step made: how code reads it, and where it is bound."""

    expr: str  # `train_sampler`, `self.train_sampler`, `samplers["train"]`
    statement: cst.BaseStatement  # the loader's statement (the sampler is bound just before it)
    shuffles: bool  # False when the loader never shuffled (set_epoch then changes nothing)


def _shard(site: Site, facts: Facts, options, edits: Edits) -> list[SamplerMade]:
    name = site.name
    where = site.statement or site.call
    if site.role == VALIDATION:
        edits.row(facts, where, LOADERS.code, Operation.NOTE,
                  f"{name}: a validation loader ({site.why}), left whole: each process evaluates the whole set")
        return []
    if site.role != TRAIN:
        edits.row(facts, where, LOADERS.code, Operation.NOTE,
                  f"{name}: left whole, nothing says whether it trains or validates; a training loader needs "
                  f"sampler={SAMPLER}(its dataset) so that each process reads its own part")
        return []
    own = _own_sampler(site, facts)
    if own:
        edits.row(facts, where, LOADERS.code, Operation.NOTE,
                  f"{name} has its own sampler ({own}): kept, and its batch too; every process "
                  f"reads all it gives unless it splits by rank (torch.distributed.get_rank())")
        return []
    why_not = site.why_not or _why_not_in_place(site, facts)
    if why_not:
        edits.row(facts, where, LOADERS.code, Operation.NOTE,
                  f"{name}: a training loader left whole, {why_not}; "
                  f"give it sampler={SAMPLER}(its dataset) (shuffle moved into the sampler)")
        return []
    edits.needs_torch = True
    if site.split is not None:
        return _shard_split(site, facts, options, edits)
    return [_shard_one(site, facts, options, edits)]


def _own_sampler(site: Site, facts: Facts) -> str:
    """The sampler the loader is given (a keyword, by position, or in a `**dict` display), if any."""
    own = argument(site.call, "sampler") or argument(site.call, "batch_sampler")
    if own is not None and not is_none(own.value):
        return code_of(own.value)
    kwargs = double_star(site.call)
    if kwargs is not None and any(dict_has_key(kwargs.value, key, site, facts) for key in ("sampler", "batch_sampler")):
        return f"in **{code_of(kwargs.value)}"
    return ""


def _why_not_in_place(site: Site, facts: Facts) -> str:
    dataset = argument(site.call, "dataset")
    if dataset is None:
        return "its dataset is not given by name or position"
    if is_iterable_dataset(dataset.value, site, facts):
        return ("its dataset is an IterableDataset, which no sampler splits: its __iter__ must yield a different "
                "part on each process (torch.distributed.get_rank())")
    if any(a.star == "*" for a in site.call.args):
        return "its arguments are spread from a sequence (*args)"
    if site.split is not None and double_star(site.call) is not None and argument(site.call, "shuffle") is None:
        return "its shuffle may come from **kwargs, which this step does not read within a comprehension"
    return ""


def _shard_one(site: Site, facts: Facts, options, edits: Edits) -> SamplerMade:
    call, hoisted = site.call, []
    sampler = _fresh(_renamed(site.label, "sampler", "train_sampler"), site, facts)
    dataset = argument(call, "dataset").value
    if not _cheap(dataset):  # (built once, for the sampler and the loader both)
        name = _fresh(_renamed(site.label, "dataset", "train_dataset"), site, facts, for_target=False)
        hoisted.append(cst.parse_statement(f"{name} = {code_of(dataset)}"))
        dataset = cst.Name(name)
    shuffle, kwargs = argument(call, "shuffle"), double_star(call)
    if shuffle is None and kwargs is not None:
        order = f'{code_of(kwargs.value)}.get("shuffle", False)'
    else:
        order = "False" if shuffle is None or is_none(shuffle.value) else code_of(shuffle.value)
    hoisted.append(cst.parse_statement(f"{sampler} = {SAMPLER}({code_of(dataset)}, shuffle={order}) if {WORLD_SIZE} > 1 else None"))
    new = with_value(call, "dataset", dataset)
    new = _with_shuffle_and_sampler(new, shuffle, kwargs, sampler)
    new = _with_batch(new, site, facts, options, edits, kwargs)
    edits.calls[call] = new
    edits.before[site.statement] = hoisted
    edits.row(facts, site.statement, LOADERS.code, Operation.INSERT,
              f"{sampler}: a DistributedSampler on {site.name} (training: {site.why}), the shuffle moved into it: "
              f"each process reads its own 1/{WORLD_SIZE} of the set (a set whose length is no multiple of {WORLD_SIZE} "
              f"has a few samples repeated to even the parts); without a launcher ({WORLD_SIZE} 1) it reads the whole set as before")
    return SamplerMade(sampler, site.statement, order != "False")


def _with_shuffle_and_sampler(call: cst.Call, shuffle: cst.Arg | None, kwargs: cst.Arg | None, sampler: str) -> cst.Call:
    no_sampler = f"{sampler} is None"
    if shuffle is None and kwargs is not None:  # (the shuffle, if any, is in the dict: off where the sampler shuffles)
        star = code_of(kwargs.value)
        spread = expr(f'dict({star}, shuffle={star}.get("shuffle", False) and {no_sampler})')
        call = replace_arg(call, double_star(call), double_star(call).with_changes(value=spread))
    elif shuffle is not None and not is_false(shuffle.value):
        current = argument(call, "shuffle")
        call = replace_arg(call, current, current.with_changes(value=_and_no_sampler(shuffle.value, no_sampler)))
    positional = argument(call, "sampler")
    if positional is not None:  # (`None` given by position: ours takes its place)
        return replace_arg(call, positional, positional.with_changes(value=expr(sampler)))
    return add_keyword(call, "sampler", expr(sampler), after=argument(call, "shuffle"))


def _and_no_sampler(value: cst.BaseExpression, no_sampler: str) -> cst.BaseExpression:
    if isinstance(value, cst.Name) and value.value == "True":
        return expr(f"({no_sampler})")
    if not value.lpar and not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison, cst.UnaryOperation)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=value, operator=cst.And(), right=expr(no_sampler))


def _with_batch(call: cst.Call, site: Site, facts: Facts, options, edits: Edits, kwargs: cst.Arg | None,
                only_when: str = "") -> cst.Call:
    """The batch split across the processes (global batch kept), or kept per process (per-rank)."""
    batch = argument(call, "batch_size")
    name = site.name
    if options.batch == "per-rank":
        kept = code_of(batch.value) if batch is not None else "1 (the default)"
        edits.row(facts, site.statement, BATCH_SIZE.code, Operation.NOTE,
                  f"{name}: batch_size {kept} kept on each process (--distributed-batch per-rank): the global batch is "
                  f"{WORLD_SIZE} times larger, the learning rate scaled to match", api="")
        return call
    if batch is None and kwargs is not None and dict_has_key(kwargs.value, "batch_size", site, facts):
        star = double_star(call)
        spread = star.value  # dict(kw, shuffle=...) made above, or the bare name
        per_process = expr(f'{code_of(kwargs.value)}["batch_size"] // {WORLD_SIZE}')
        if isinstance(spread, cst.Call):
            spread = add_keyword(spread, "batch_size", per_process)
        else:
            spread = expr(f"dict({code_of(spread)}, batch_size={code_of(per_process)})")
        edits.row(facts, site.statement, BATCH_SIZE.code, Operation.MODIFY,
                  f"{name}: the batch size in **{code_of(kwargs.value)} split across the processes ({WORLD_SIZE} of them "
                  f"take batch_size // {WORLD_SIZE} each): the global batch stays the script's", api="")
        return replace_arg(call, star, star.with_changes(value=spread))
    if batch is None or is_none(batch.value):
        what = "no batch_size (1 a process)" if batch is None else "batch_size=None (no batching)"
        edits.row(facts, site.statement, BATCH_SIZE.code, Operation.NOTE,
                  f"{name}: {what}, not split: each process reads its own samples, the global batch is {WORLD_SIZE} of them", api="")
        return call
    split = expr(f"{_operand(batch.value)} // {WORLD_SIZE}")
    if only_when:
        split = cst.IfExp(test=expr(only_when), body=split, orelse=batch.value)
        name = f"the training split of {name}"
    edits.row(facts, site.statement, BATCH_SIZE.code, Operation.MODIFY,
              f"{name}: batch_size {code_of(batch.value)} -> {code_of(batch.value)} // {WORLD_SIZE} on each process, so the "
              f"global batch stays {code_of(batch.value)} and N cards train as one did (exact where it is a multiple of "
              f"{WORLD_SIZE}); --distributed-batch per-rank keeps it per process and scales the learning rate instead", api="")
    return replace_arg(call, batch, batch.with_changes(value=split))


def _shard_split(site: Site, facts: Facts, options, edits: Edits) -> list[SamplerMade]:
    split, call, hoisted = site.split, site.call, []
    var, keys = split.var, split.train_keys
    loop = f"for {var} in {code_of(split.comp.for_in.iter)}"
    label = site.label or "loaders"
    is_train = f"{var} == {keys[0].value}" if len(keys) == 1 else f"{var} in ({', '.join(k.value for k in keys)})"
    samplers = _fresh(_renamed(label, "sampler", "samplers", plural=True), site, facts)
    dataset = argument(call, "dataset").value
    if not _cheap(dataset):
        datasets = _fresh(_renamed(label, "dataset", "datasets", plural=True), site, facts, for_target=False)
        hoisted.append(cst.parse_statement(f"{datasets} = {{{var}: {code_of(dataset)} {loop}}}"))
        dataset = expr(f"{datasets}[{var}]")
    shuffle = argument(call, "shuffle")
    order = "False" if shuffle is None or is_none(shuffle.value) else code_of(shuffle.value)
    hoisted.append(cst.parse_statement(
        f"{samplers} = {{{var}: {SAMPLER}({code_of(dataset)}, shuffle={order}) if {WORLD_SIZE} > 1 and {is_train} else None {loop}}}"))
    mine = f"{samplers}[{var}]"
    new = with_value(call, "dataset", dataset)
    new = _with_shuffle_and_sampler(new, shuffle, None, mine)
    new = _with_batch(new, site, facts, options, edits, None, only_when=is_train)
    edits.calls[call] = new
    edits.before[site.statement] = hoisted
    names = ", ".join(str(k.evaluated_value) for k in keys)
    edits.row(facts, site.statement, LOADERS.code, Operation.INSERT,
              f"{samplers}: a DistributedSampler for the training split ({names}) of {site.name}, the others left whole "
              f"(each process evaluates them whole); the shuffle moved into the sampler; without a launcher every split reads as before")
    return [SamplerMade(f"{samplers}[{k.value}]", site.statement, order != "False") for k in keys]


def _cheap(dataset: cst.BaseExpression) -> bool:
    """A dataset spelled by a name (`train_set`, `self.train_set`, `sets["train"]`, `sets[x]`):
    read twice it is the same object, so it is not bound to a new name."""
    if isinstance(dataset, cst.Name):
        return True
    if isinstance(dataset, cst.Attribute):
        return _cheap(dataset.value)
    if isinstance(dataset, cst.Subscript) and len(dataset.slice) == 1 and isinstance(dataset.slice[0].slice, cst.Index):
        key = dataset.slice[0].slice.value
        return _cheap(dataset.value) and isinstance(key, (cst.Name, cst.SimpleString, cst.Integer))
    return False


def _renamed(label: str, kind: str, fallback: str, plural: bool = False) -> str:
    """`train_loader` -> `train_sampler`, `dataloaders` -> `samplers`, `train` (a key) -> `train_sampler`."""
    if not label:
        return fallback
    if re.search("loader", label, re.I):
        renamed = re.sub(r"(?i)(data)?loader", kind, label)
        return fallback if renamed.lower() in (kind, kind + "s") and not plural else renamed
    return f"{label}_{kind}s" if plural else f"{label}_{kind}"


def _fresh(wanted: str, site: Site, facts: Facts, for_target: bool = True) -> str:
    """`wanted`, or `wanted_2`, ... where the file already spells it; `self.` + it where the loader
    is bound to an attribute (so that the class's other methods see it). Loaders bound to one
    name in one scope (`if small: train_loader = ... else: train_loader = ...`) share one."""
    key = (id(facts.scope(site.statement)), code_of(site.target) if site.target is not None else id(site), wanted)
    name = facts.chosen.get(key)
    if name is None:
        name, number = wanted, 2
        while name in facts.taken:
            name, number = f"{wanted}_{number}", number + 1
        facts.taken.add(name)
        facts.chosen[key] = name
    target = site.target if for_target else None
    if isinstance(target, cst.Attribute):
        return f"{code_of(target.value)}.{name}"
    return name


def _operand(value: cst.BaseExpression) -> str:
    """`value` as the left operand of `//` (in parentheses where it needs them)."""
    text = code_of(value)
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer)
    return text if isinstance(value, simple) or value.lpar else f"({text})"
