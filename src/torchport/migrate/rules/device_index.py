"""TP002: CUDA devices written as bare indices (`x.to(0)`, `device=0`, `device_ids=[0, 1]`)."""

from __future__ import annotations

import libcst as cst

from torchport.migrate.device_indices import INDEX_SOURCES, LIST
from torchport.apis.devices import DEVICE_KEYWORDS, TO_METHODS, TORCH_DEVICE_KEYWORDS
from torchport.migrate.rules.base.device_exprs import device_expression
from torchport.migrate.rules.base.nodes import call_argument, parse_expression, source_of
from torchport.migrate.rules.base.rule import Rule
from torchport.targets.devices import indexed_device_source


class DeviceIndexRule(Rule):
    """Rewrite device indices where torch reads them as a CUDA device: integer literals, and
    names whose value is known to be an index (`int(os.environ["LOCAL_RANK"])`, an `mp.spawn`
    rank, `--local_rank`, and what is assigned from them: see device_indices.py).

    `x.to(0)`, `model.to(self.gpu_id)`, `torch.device(1)`, `device=0`, `map_location=rank`,
    `output_device=0`, `device_id=0` where a torch API takes it (FSDP, init_process_group; not
    another library's), `x.to(device_ids[0])` where `device_ids` was given to DDP. The elements of
    `device_ids=[0, 1]` stay ints (apis/devices.py's INDEX_LIST_KEYWORDS). Integers anywhere else
    are numbers, and other names may hold a device, a dtype or a tensor: they are left alone.
    """

    code = "TP002"
    order = 40
    mentions = (
        rb"\.to(?:_empty)?\(\s*\d|device\(\s*\d|device(?:_id)?\s*=\s*\d|map_location\s*=\s*\d|output_device\s*=\s*\d|"
        + INDEX_SOURCES
    )
    reads = ("torch.device",)
    title = "device indices"
    readme = """device indices: `x.to(0)`, `device=1`, `map_location=0`, torch's `device_id=0`, and names that hold one,
    followed from their source: `self.gpu_id = int(os.environ["LOCAL_RANK"])` then `model.to(self.gpu_id)`,
    an `mp.spawn` rank, `--local_rank` / `--gpu`, an element of a list passed as DDP's `device_ids` (`.to(device_ids[0])`);
    `device_ids=[0, 1]` itself stays ints (barrier takes no other)"""
    sample = "import torch\nx = torch.zeros(2).to(0)\n"

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in TO_METHODS:
            first = call_argument(node, "device", position=0)
            if first is not None:
                self._rewrite_index(first.value)
        if self.qualified_name(func) == "torch.device":
            first = call_argument(node, "type", position=0)
            if first is not None:
                self._rewrite_index(first.value)
        for arg in node.args:
            if arg.keyword is None:
                continue
            keyword = arg.keyword.value
            if keyword in DEVICE_KEYWORDS or (keyword in TORCH_DEVICE_KEYWORDS and self._calls_torch(func)):
                # torch.load cannot map onto "cpu:0": where the device is not known, use its type
                keep_index = not (keyword == "map_location" and self.target.device_chosen_at_run_time)
                # DDP reads an index held in a name as one on its module's device: it can stay
                self._rewrite_index(arg.value, keep_index, names=keyword != "output_device")

    def _calls_torch(self, func: cst.BaseExpression) -> bool:
        name = self.qualified_name(func)
        return name is not None and name.split(".")[0] == "torch"

    def _rewrite_index(self, value: cst.BaseExpression, keep_index: bool = True, names: bool = True) -> None:
        if not isinstance(value, cst.Integer):
            if names:
                self._rewrite_index_name(value, keep_index)
            return
        new = device_expression(self.target, value.value if keep_index else None)
        self.change(value, lambda _: parse_expression(new), f"replace device index {value.value} with {new}", needs=new)

    def _rewrite_index_name(self, value: cst.BaseExpression, keep_index: bool) -> None:
        if isinstance(value, (cst.Name, cst.Attribute)):
            known = source_of(value) in self.context.device_index_names
        else:  # an element of a list of indices: `.to(device_ids[0])`
            known = _is_element(value) and source_of(value.value) + LIST in self.context.device_index_names
        if not known:
            return
        name = source_of(value)
        target = self.target
        new = indexed_device_source(target, name) if keep_index else device_expression(target, None)
        needs = indexed_device_source(target, "0")  # (what the new code needs, not the script's names)
        self.change(value, lambda _: parse_expression(new), f"{name} holds a device index: {new}", needs=needs)


def _is_element(value: cst.BaseExpression) -> bool:
    """`ids[0]`, `ids[i]`: one element (not a slice) of a name or an attribute."""
    return (isinstance(value, cst.Subscript) and isinstance(value.value, (cst.Name, cst.Attribute))
            and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index))
