"""TP006-TP007: process groups and DistributedDataParallel."""

from __future__ import annotations

import ast

import libcst as cst

from torchport.apis.devices import Presence
from torchport.apis.distributed import (
    BACKEND_POSITIONS, BINDS_DEVICE, CUDA_DEVICE, CUDA_DIST_BACKEND, DDP_CLASSES, DEVICE_POSITIONS, EACH_DEVICES_DEFAULT, GETS_BACKEND,
    GROUP_DEVICE_KEYWORD, NCCL_ENUM, backend_given_when_run, ddp_device_ids, map_backend, process_group_device,
)
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import quoted, string_value
from torchport.migrate.rules.base.nodes import call_argument, parse_expression, source_of
from torchport.migrate.rules.base.rule import Rule
from torchport.string_literals import is_key_argument


NCCL_PROBE = "torch.distributed.is_nccl_available"


class DistributedBackendRule(Rule):
    """Replace the NCCL backend (`"nccl"` or `"NCCL"` where it is a whole string, `dist.Backend.NCCL`)
    with the target's collective library: hccl, xccl, gloo, or the device's default backend; and a
    backend per device ("cuda:nccl,cpu:gloo") with the target's pair ("npu:hccl,cpu:gloo", "gloo"
    where gloo serves the target, None on the device-agnostic target: each device's default).

    Where the backend is asked for (an argument, an assignment, an option's default, a branch of a
    conditional) it is replaced; where it says what a value is, it is kept, with a note: an operand
    of a comparison (`pg_type == "nccl"`, `in ("nccl", "gloo")`), a `case "nccl":` pattern, a key
    (`{"nccl": ProcessGroupNCCL, "gloo": ProcessGroupGloo}`, `groups["nccl"]`). Replaced there, a
    chain `if pg_type == "nccl": ... elif pg_type == "gloo": ...` would test gloo twice on the CPU,
    the first branch shadowing the second. Except a comparison with `dist.get_backend()`: it asks
    about the group this file made, which is on the target's backend now."""

    code = "TP006"
    order = 100
    mentions = rb"nccl|NCCL|init_process_group|new_group"
    reads = (NCCL_ENUM, NCCL_PROBE)
    title = "nccl backend"
    readme = """`nccl` (and `NCCL`) → `hccl`, `xccl`, `gloo`, or the device's default backend; `"cuda:nccl,cpu:gloo"` →
    `"npu:hccl,cpu:gloo"`, `"gloo"`, or `None` (each device's default); kept, with a note, where it is compared
    (`pg_type == "nccl"`, but not `dist.get_backend() == "nccl"`), matched (`case "nccl":`) or a key (`{"nccl": ...}`);
    a backend read from the options (`backend=args.dist_backend`) → `{"nccl": "gloo"}.get(args.dist_backend, ...)`"""
    sample = 'import torch.distributed as dist\ndist.init_process_group(backend="nccl")\n'

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        """`dist.is_nccl_available()` asks whether the collective library is there: the target's.
        A process group's backend read from an option (`backend=args.dist_backend`) is the target's
        where the command line says nccl (`backend_given_when_run`)."""
        called = self.qualified_name(node.func)
        if called in BINDS_DEVICE:
            self._backend_from_options(node, called)
        if called != NCCL_PROBE:
            return
        backend = self.target.dist_backend
        func = node.func
        if isinstance(func, cst.Attribute):
            probe = func.with_changes(attr=cst.Name("is_backend_available"))
        else:
            probe = parse_expression("torch.distributed.is_backend_available")
        new = cst.Call(func=probe, args=[cst.Arg(parse_expression(backend))])
        self.change(node, lambda _: new, f"ask for the {self.target.name} backend instead of nccl", needs=backend)

    def _backend_from_options(self, node: cst.Call, called: str) -> None:
        given = call_argument(node, "backend", BACKEND_POSITIONS[called.rsplit(".", 1)[1]])
        if given is None or not isinstance(given.value, cst.Attribute) or self.imported_name(given.value):
            return  # (a literal is the string rule's; an imported constant, Backend.NCCL, the enum rule's)
        value = source_of(given.value)
        backend = self.target.dist_backend
        new = parse_expression(backend_given_when_run(value, CUDA_DIST_BACKEND, backend))
        self.change(given.value, lambda _: new, f"{value} names the backend where the script runs: "
                    f"{CUDA_DIST_BACKEND} there becomes the {self.target.name} backend, {backend}", needs=backend)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        value = string_value(node)
        if isinstance(self.parent(node), cst.Expr) or not isinstance(value, str):
            return
        whole = value in (CUDA_DIST_BACKEND, CUDA_DIST_BACKEND.upper())
        source = None if whole else _per_device_backend(value, self.target)
        if not whole and source is None:
            return
        if self._says_what_a_value_is(node):
            self._keep(node, repr(value))
        elif whole:
            self._replace(node)
        else:
            new = parse_expression(source)
            if isinstance(new, cst.SimpleString):
                new = quoted(node, new.evaluated_value)
            self.change(node, lambda _: new, f"give each device its backend on {self.target.name}: {source}")

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if self.qualified_name(node) != NCCL_ENUM:
            return
        if self._says_what_a_value_is(node):
            self._keep(node, source_of(node))
        else:
            self._replace(node)

    def _says_what_a_value_is(self, node: cst.BaseExpression) -> bool:
        """Whether `node`, the NCCL backend, is compared with a value (itself, or an item of a
        tuple, list or set it is tested against), a `case` pattern, or a key: a dict's, a
        subscript's, `.get`'s; not where the other side of a comparison is `dist.get_backend()`."""
        child, parent = node, self.parent(node)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Set)):
            child, parent = parent, self.parent(parent)
        if isinstance(parent, cst.ComparisonTarget):
            parent = self.parent(parent)
        if isinstance(parent, cst.Comparison):
            operands = (parent.left, *(target.comparator for target in parent.comparisons))
            return not any(isinstance(o, cst.Call) and self.qualified_name(o.func) in GETS_BACKEND for o in operands)
        if isinstance(parent, (cst.DictElement, cst.MatchMappingElement)):
            return parent.key is child
        return isinstance(parent, (cst.MatchValue, cst.Index)) or is_key_argument(parent, self.parent)

    def _keep(self, node: cst.BaseExpression, spelled: str) -> None:
        """Report `node`, the NCCL backend as a comparison's operand, a pattern or a key, as kept."""
        self.report(node, Operation.NOTE, f"kept {spelled}: compared, matched or a key, it says what a value is, not "
                    f"which backend to use; the process groups this file makes are on {self.target.dist_backend} now",
                    api=spelled)

    def _replace(self, node: cst.CSTNode) -> None:
        backend = self.target.dist_backend
        new = parse_expression(backend)
        if isinstance(new, cst.SimpleString) and isinstance(node, cst.SimpleString):
            new = quoted(node, new.evaluated_value)  # 'nccl' -> 'gloo', in the file's own quotes
        self.change(node, lambda _: new, f"replace the nccl backend with {backend}", needs=backend)


def _per_device_backend(value: str, target) -> str | None:
    """The source of what `value`, a backend per device ("cuda:nccl,cpu:gloo"), becomes on
    `target`, or None where it is no such string."""
    if ":" not in value or map_backend(value, CUDA_DIST_BACKEND, CUDA_DEVICE) is None:
        return None
    try:
        backend = ast.literal_eval(target.dist_backend)
    except ValueError:  # (an expression: the device-agnostic target's)
        return EACH_DEVICES_DEFAULT
    return repr(map_backend(value, backend, target.device_type))


class DdpDeviceIdsRule(Rule):
    """`DistributedDataParallel(device_ids=..., output_device=...)`, by keyword or by position
    (`DDP(model, device_ids)`, as the DDP tutorial passes them): CPU modules take neither, so they
    are dropped on the CPU, and given only when a device exists on device-agnostic targets. The
    same for a process group's `init_process_group(device_id=...)`, which torch refuses without an
    accelerator (an int or a CPU device alike)."""

    code = "TP007"
    order = 110
    mentions = rb"device_ids?|output_device|DistributedDataParallel"
    reads = (*DDP_CLASSES, *BINDS_DEVICE)
    title = "DDP device_ids"
    readme = """DDP `device_ids`/`output_device` and `init_process_group(device_id=)`: dropped on the CPU, guarded on
    `accelerator`"""
    sample = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "\n"
        "def wrap(model, rank):\n"
        "    return DDP(model, device_ids=[rank], output_device=rank)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        name = self.qualified_name(node.func)
        if name in DDP_CLASSES:
            self._bind(node, device_positions, ddp_device_ids(self.target), "device_ids/output_device", "DDP")
        elif name in BINDS_DEVICE:
            self._bind(node, _group_device_position, process_group_device(self.target), GROUP_DEVICE_KEYWORD,
                       name.rpartition(".")[2])

    def _bind(self, node: cst.Call, positions, presence: Presence, what: str, where: str) -> None:
        """Drop (or guard) the device arguments of `node` that `positions` finds, as `presence` says."""
        target = self.target
        device_args = [node.args[i] for i in positions(node)]
        device_args = [a for a in device_args if not self._already_guarded(a.value)]
        if not device_args:
            return
        if presence is Presence.NEVER:
            self.change(node, lambda call: _without(call, positions), f"drop {what}: {where} on {target.name} takes none")
        elif presence is Presence.AT_RUN_TIME:
            guard = target.guard

            def fix(updated: cst.Call) -> cst.Call:
                args = list(updated.args)
                for index in positions(updated):
                    arg = args[index]
                    if not self._already_guarded(arg.value):
                        value = cst.IfExp(test=parse_expression(guard), body=arg.value, orelse=cst.Name("None"))
                        args[index] = arg.with_changes(value=value)
                return updated.with_changes(args=args)

            self.change(node, fix, f"pass {where} {what} only when {guard}", needs=guard)

    def _already_guarded(self, value: cst.BaseExpression) -> bool:
        guard = self.target.guard
        return guard is not None and isinstance(value, cst.IfExp) and source_of(value.test) == guard


def device_positions(call: cst.Call) -> list[int]:
    """The indices in `call.args` of DDP's device_ids and output_device, by keyword or by position
    (none by position after a `*args`: where it lands is not known)."""
    found = []
    for index, arg in enumerate(call.args):
        if arg.star:
            if arg.keyword is None and arg.star == "*":
                break
            continue
        if arg.keyword is not None:
            if arg.keyword.value in DEVICE_POSITIONS:
                found.append(index)
        elif index in DEVICE_POSITIONS.values():
            found.append(index)
    return found


def _group_device_position(call: cst.Call) -> list[int]:
    """The index in `call.args` of a process group's `device_id=` (by keyword only)."""
    return [i for i, arg in enumerate(call.args) if arg.keyword is not None and arg.keyword.value == GROUP_DEVICE_KEYWORD]


def _without(call: cst.Call, positions) -> cst.Call:
    """`call` without the arguments `positions` finds. One passed by position is dropped when no
    other positional argument follows it (which would then take its place), else it becomes None."""
    drop = set(positions(call))
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    last_kept = max((i for i in positional if i not in drop), default=-1)
    args = []
    for index, arg in enumerate(call.args):
        if index not in drop:
            args.append(arg)
        elif arg.keyword is None and index < last_kept:
            args.append(arg.with_changes(value=cst.Name("None")))
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
