"""TP034 and TP035: settings of the frameworks a script trains with that name CUDA's kernels or
devices (apis/frameworks.py): Hugging Face's attention and device maps, Lightning's accelerator and
precision."""

from __future__ import annotations

import libcst as cst

from torchport.apis.frameworks import (ATTENTION_ATTRIBUTES, ATTENTION_KEYWORD, CUDA_ONLY_ATTENTION,
                                       DEVICE_MAP_KEYWORD, LIGHTNING_ACCELERATOR_KEYWORD, LIGHTNING_BFLOAT16,
                                       LIGHTNING_ENTRIES, LIGHTNING_FLOAT16, LIGHTNING_GPU,
                                       LIGHTNING_PRECISION_KEYWORD, PORTABLE_ATTENTION,
                                       XFORMERS_SWITCH, lightning_accelerator)
from torchport.findings import Operation
from torchport.migrate.rules.base.device_exprs import cuda_literal_index
from torchport.migrate.rules.base.fixes import remove_statement
from torchport.migrate.rules.base.nodes import call_argument
from torchport.migrate.rules.base.rule import Rule
from torchport.migrate.rules.cuda_api import sole_statement
from torchport.string_literals import quoted, string_value
from torchport.targets.devices import HOST_DEVICE_TYPE


class HuggingFaceSettingsRule(Rule):
    """transformers' `attn_implementation="flash_attention_2"` (a keyword, a dict entry of model
    arguments, a config attribute) asks for flash-attn's CUDA kernels: "sdpa", torch's attention,
    runs on every device. diffusers' `x.enable_xformers_memory_efficient_attention()` needs
    xformers (CUDA only): dropped, as diffusers' default attention is SDPA; inside the examples'
    `if args.enable_xformers_memory_efficient_attention:` block, the block goes whole (its version
    checks and its `else: raise ValueError("xformers is not available")` with it). On the CPU a
    `device_map` index (`0`, `{"": local_rank}`) names an accelerator there is none of: "cpu"."""

    code = "TP034"
    order = 127
    mentions = rb"flash_attention_[23]|enable_xformers_memory_efficient_attention|device_map"
    reads = ()
    title = "transformers and diffusers settings"
    readme = """transformers' `attn_implementation="flash_attention_2"` → `"sdpa"`; diffusers'
    `enable_xformers_memory_efficient_attention()` dropped (SDPA is its default); on cpu a `device_map` index → `"cpu"`"""
    sample = 'model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2")\n'

    def visit_Arg(self, node: cst.Arg) -> None:  # noqa: N802
        if node.keyword is None:
            return
        if node.keyword.value == ATTENTION_KEYWORD:
            self._portable_attention(node.value)
        elif node.keyword.value == DEVICE_MAP_KEYWORD and not self.target.has_device:
            self._host_device_map(node.value)

    def visit_DictElement(self, node: cst.DictElement) -> None:  # noqa: N802
        if string_value(node.key) == ATTENTION_KEYWORD:
            self._portable_attention(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:  # noqa: N802
        if any(isinstance(t.target, cst.Attribute) and t.target.attr.value in ATTENTION_ATTRIBUTES for t in node.targets):
            self._portable_attention(node.value)

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == XFORMERS_SWITCH):
            return
        why = "xformers is built for CUDA alone; diffusers' default attention, torch's SDPA, runs here"
        block = self._switched_by_flag(node)
        if block is not None:  # (its checks of xformers' version and its `else: raise` go with it)
            self.change(block, remove_statement, f"drop the {XFORMERS_SWITCH} block: {why}",
                        operation=Operation.DELETE, api=XFORMERS_SWITCH)
            return
        line = sole_statement(self, node)
        if line is None:
            self.report(node, Operation.NOTE, f"{XFORMERS_SWITCH}() raises without xformers: {why}; left (its value is used)",
                        api=XFORMERS_SWITCH)
            return
        self.change(line, remove_statement, f"drop {XFORMERS_SWITCH}(): {why}", operation=Operation.DELETE,
                    api=XFORMERS_SWITCH)

    def _switched_by_flag(self, call: cst.Call) -> cst.If | None:
        """The `if args.enable_xformers_memory_efficient_attention:` block around `call` (diffusers'
        examples), with no else of its own, where there is one."""
        node = self.parent(call)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            if isinstance(node, cst.If) and node.orelse is None and _names_the_switch(node.test):
                return node
            node = self.parent(node)
        return None

    def _portable_attention(self, value: cst.BaseExpression) -> None:
        name = string_value(value)
        if name not in CUDA_ONLY_ATTENTION:
            return
        self.change(value, lambda updated: quoted(updated, PORTABLE_ATTENTION),
                    f'attention "{name}" is flash-attn\'s, built for CUDA alone: "{PORTABLE_ATTENTION}" (torch\'s) '
                    f"runs on {self.target.name}", api=ATTENTION_KEYWORD)

    def _host_device_map(self, value: cst.BaseExpression) -> None:
        indices = [value] if isinstance(value, cst.Integer) else [
            e.value for e in getattr(value, "elements", ()) if isinstance(value, cst.Dict)
            and isinstance(e, cst.DictElement) and string_value(e.value) is None]
        for index in indices:
            self.change(index, lambda updated: cst.SimpleString(f'"{HOST_DEVICE_TYPE}"'),
                        f'a device_map index names an accelerator: "{HOST_DEVICE_TYPE}" here', api=DEVICE_MAP_KEYWORD)


def lightning_entry(rule: Rule, call: cst.CSTNode | None) -> str | None:
    """The qualified name of Lightning's Trainer or Fabric that `call` calls, else None."""
    if not isinstance(call, cst.Call):
        return None
    entry = rule.imported_name(call.func)
    return entry if entry in LIGHTNING_ENTRIES else None


def is_lightning_accelerator(rule: Rule, literal: cst.SimpleString, parent: cst.CSTNode | None) -> bool:
    """Whether `literal` is the accelerator given to Lightning's Trainer or Fabric (TP035's, not a device string)."""
    return (isinstance(parent, cst.Arg) and parent.keyword is not None
            and parent.keyword.value == LIGHTNING_ACCELERATOR_KEYWORD and lightning_entry(rule, rule.parent(parent)) is not None)


def _names_the_switch(test: cst.BaseExpression) -> bool:
    name = test.attr.value if isinstance(test, cst.Attribute) else test.value if isinstance(test, cst.Name) else ""
    return name == XFORMERS_SWITCH


class LightningSettingsRule(Rule):
    """Lightning's `Trainer`/`Fabric(accelerator="gpu")` (or "cuda") names CUDA: the target's device
    type, "auto" on the device-agnostic target (Lightning picks the accelerator it finds; a device
    type it has no accelerator for would raise). Where Lightning has no accelerator of that name
    built in (npu, xpu) a row says a plugin must register one. On the CPU its mixed precision is
    bfloat16: `precision="16-mixed"` → `"bf16-mixed"`."""

    code = "TP035"
    order = 129
    mentions = rb"\bTrainer\b|\bFabric\b"
    reads = ()
    title = "Lightning settings"
    readme = """Lightning's `Trainer`/`Fabric(accelerator="gpu"/"cuda")` → the target's device type (`"auto"` on accelerator), a row
    where Lightning needs a plugin for it (npu, xpu); on cpu `precision="16-mixed"` → `"bf16-mixed"`"""
    sample = 'import lightning as L\ntrainer = L.Trainer(accelerator="gpu", precision="16-mixed")\n'

    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        entry = lightning_entry(self, node)
        if entry is None:
            return
        accelerator = call_argument(node, LIGHTNING_ACCELERATOR_KEYWORD)
        if accelerator is not None:
            self._accelerator(accelerator.value, entry)
        precision = call_argument(node, LIGHTNING_PRECISION_KEYWORD)
        if precision is not None and not self.target.has_device:
            self._host_precision(precision.value)

    def _accelerator(self, value: cst.BaseExpression, entry: str) -> None:
        name = string_value(value)
        if name not in LIGHTNING_GPU and not cuda_literal_index(value)[0]:
            return
        ours = lightning_accelerator(self.target.device_type)
        self.change(value, lambda updated: quoted(updated, ours), f'Lightning\'s accelerator "{name}" is CUDA: "{ours}"',
                    api=entry)
        if not self.target.lightning_built_in:
            self.report(value, Operation.UNSUPPORTED, f'Lightning has no "{ours}" accelerator built in: register one '
                        "(an Accelerator subclass, from a plugin or your own, in its AcceleratorRegistry) before "
                        f"{entry.rsplit('.', 1)[1]}() reads it", api=entry)

    def _host_precision(self, value: cst.BaseExpression) -> None:
        name = string_value(value) if isinstance(value, cst.SimpleString) else (
            value.value if isinstance(value, cst.Integer) else None)
        if name not in LIGHTNING_FLOAT16:
            return
        bfloat16 = LIGHTNING_BFLOAT16[name]
        self.change(value, lambda updated: cst.SimpleString(f'"{bfloat16}"'),
                    f'Lightning\'s float16 precision "{name}" is CUDA\'s; on the CPU it mixes bfloat16: "{bfloat16}"',
                    api=LIGHTNING_PRECISION_KEYWORD)
