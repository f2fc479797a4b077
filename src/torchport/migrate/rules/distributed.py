"""TP006-TP007: process groups and DistributedDataParallel."""

from __future__ import annotations

import libcst as cst

from torchport.apis.devices import Presence
from torchport.apis.distributed import CUDA_DIST_BACKEND, DDP_CLASSES, NCCL_ENUM, ddp_device_ids
from torchport.migrate.rules.base.device_exprs import quoted, string_value
from torchport.migrate.rules.base.nodes import call_argument, parse_expression, source_of, without_arguments
from torchport.migrate.rules.base.rule import Rule



NCCL_PROBE = "torch.distributed.is_nccl_available"


class DistributedBackendRule(Rule):
    """Replace the NCCL backend (`"nccl"` or `"NCCL"` anywhere it is a whole string, `dist.Backend.NCCL`)
    with the target's collective library: hccl, xccl, gloo, or the device's default backend."""

    code = "TP006"
    order = 100
    mentions = rb"nccl|NCCL"
    reads = (NCCL_ENUM, NCCL_PROBE)
    title = "nccl backend"
    readme = """`nccl` (and `NCCL`) → `hccl`, `xccl`, `gloo`, or the device's default backend"""
    sample = 'import torch.distributed as dist\ndist.init_process_group(backend="nccl")\n'

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        """`dist.is_nccl_available()` asks whether the collective library is there: the target's."""
        if self.qualified_name(node.func) != NCCL_PROBE:
            return
        backend = self.target.dist_backend
        func = node.func
        if isinstance(func, cst.Attribute):
            probe = func.with_changes(attr=cst.Name("is_backend_available"))
        else:
            probe = parse_expression("torch.distributed.is_backend_available")
        new = cst.Call(func=probe, args=[cst.Arg(parse_expression(backend))])
        self.change(node, lambda _: new, f"ask for the {self.target.name} backend instead of nccl", needs=backend)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        if string_value(node) in (CUDA_DIST_BACKEND, CUDA_DIST_BACKEND.upper()) and not isinstance(self.parent(node), cst.Expr):
            self._replace(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if self.qualified_name(node) == NCCL_ENUM:
            self._replace(node)

    def _replace(self, node: cst.CSTNode) -> None:
        backend = self.target.dist_backend
        new = parse_expression(backend)
        if isinstance(new, cst.SimpleString) and isinstance(node, cst.SimpleString):
            new = quoted(node, new.evaluated_value)  # 'nccl' -> 'gloo', in the file's own quotes
        self.change(node, lambda _: new, f"replace the nccl backend with {backend}", needs=backend)


class DdpDeviceIdsRule(Rule):
    """`DistributedDataParallel(device_ids=..., output_device=...)`: CPU modules take neither, so
    they are dropped on the CPU, and given only when a device exists on device-agnostic targets."""

    code = "TP007"
    order = 110
    mentions = rb"device_ids|output_device"
    reads = tuple(DDP_CLASSES)
    title = "DDP device_ids"
    readme = """DDP `device_ids`/`output_device`: dropped on the CPU, guarded on `accelerator`"""
    sample = (
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "\n"
        "def wrap(model, rank):\n"
        "    return DDP(model, device_ids=[rank], output_device=rank)\n"
    )

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if self.qualified_name(node.func) not in DDP_CLASSES:
            return
        target = self.target
        device_args = [call_argument(node, k) for k in ("device_ids", "output_device")]
        device_args = [a for a in device_args if a is not None and not self._already_guarded(a.value)]
        if not device_args:
            return
        presence = ddp_device_ids(target)
        if presence is Presence.NEVER:
            self.change(
                node,
                lambda updated: without_arguments(updated, {"device_ids", "output_device"}),
                f"drop device_ids/output_device: DDP on {target.name} takes none",
            )
        elif presence is Presence.AT_RUN_TIME:
            guard = target.guard

            def fix(updated: cst.Call) -> cst.Call:
                args = []
                for arg in updated.args:
                    if arg.keyword is not None and arg.keyword.value in ("device_ids", "output_device") and not self._already_guarded(arg.value):
                        value = cst.IfExp(test=parse_expression(guard), body=arg.value, orelse=cst.Name("None"))
                        arg = arg.with_changes(value=value)
                    args.append(arg)
                return updated.with_changes(args=args)

            self.change(node, fix, f"pass DDP device_ids/output_device only when {guard}", needs=guard)

    def _already_guarded(self, value: cst.BaseExpression) -> bool:
        guard = self.target.guard
        return guard is not None and isinstance(value, cst.IfExp) and source_of(value.test) == guard
