"""One walk of a file that records what each NPU use becomes (edits.Edits): names, methods, device
strings, tuning statements, kernels, optimizers, the profiler. The imports are decided after it
(imports.py), from what it left unconverted."""

from __future__ import annotations

import libcst as cst

from torchport.apis.distributed import BACKEND_POSITIONS, BINDS_DEVICE, backend_given_when_run
from torchport.distribute.edits import argument
from torchport.findings import Code, Operation
from torchport.npu_to_cuda import (autograd_profiler, changes, contiguous, imports, kernels, labels, names,
                                   optimizers, statements, strings)
from torchport.npu_to_cuda.edits import Edits, code
from torchport.targets import Target
from torchport.targets import npu as npu_facts

SELF = "self"  # (self.npu_format_cast(x): a method of the script's own, not torch_npu's Tensor method)


class Collector(imports.ImportWalk):
    def __init__(self, target: Target, edits: Edits) -> None:
        super().__init__()
        self.target = target
        self.edits = edits
        self.skipped: set[cst.CSTNode] = set()  # subtrees already decided (a dropped argument, a kernel's name)
        self.optimizers: set[str] = set()  # the code of what holds an NpuFused optimizer made here
        self.calls: list[cst.Call] = []  # every call (labels.py reads the losses among them)
        self.loss_names: set[str] = set()  # what the file binds to a loss that reads class indices

    def leave_Module(self, original_node: cst.Module) -> None:  # noqa: N802
        """The int32 labels that reach a loss, then the imports, decided while the metadata is at
        hand (labels.py, imports.py)."""
        labels.convert(self, self.calls, self.loss_names)
        imports.decide(self, self.edits)

    # -- the skipped subtrees --
    def on_visit(self, node: cst.CSTNode) -> bool:
        return node not in self.skipped and super().on_visit(node)

    def change(self, node, fix, line_of, code_, message, api="", operation=Operation.MODIFY) -> None:
        self.edits.fix(node, fix)
        self.edits.row(self.line(line_of), code_, operation, message, api)

    def left(self, node: cst.CSTNode, code_: Code, message: str, api: str) -> None:
        """An NPU use that stays as written: torch_npu is still needed for it (where the file
        binds the name itself too, the row names that fallback: what runs without torch_npu)."""
        fallback = self.fallback_line(node)
        if fallback is None:  # (one the file stands in for itself needs no `import torch_npu` to run)
            self.unconverted.append((self.line(node), api))
        if fallback is not None:
            self.edits.row(self.line(node), code_, Operation.UNSUPPORTED,
                           f"{message}; kept: without torch_npu the file's own fallback (line {fallback}) stands for it", api)
            return
        self.edits.row(self.line(node), code_, Operation.UNSUPPORTED, f"{message}; kept, so the file still needs torch_npu", api)

    # -- statements: NPU-only tuning goes (statements.py) --
    def visit_Expr(self, node: cst.Expr) -> bool:  # noqa: N802
        return self._drop(node, statements.dropped_call(self, node))

    def visit_Assign(self, node: cst.Assign) -> bool:  # noqa: N802
        if isinstance(node.value, cst.Call) and optimizers.constructor(self.imported(node.value.func)) is not None:
            self.optimizers.update(code(t.target) for t in node.targets)
        self.loss_names.update(labels.loss_binding(self, node))
        return self._drop(node, statements.dropped_assignment(self, node) or self._self_cast(node))

    def _self_cast(self, node: cst.Assign) -> statements.Dropped | None:
        """`x = torch_npu.npu_format_cast(x, 29)`: a kernel that is its input elsewhere, assigned
        back to it (ModelZoo's most common kernel use), goes with its statement."""
        call = node.value
        if len(node.targets) != 1 or not isinstance(call, cst.Call):
            return None
        func = self.imported(call.func)
        if func is not None:
            name, receiver = names.kernel_name(func), None
        elif isinstance(call.func, cst.Attribute) and self.imported(call.func.value) is None:
            name, receiver = call.func.attr.value, call.func.value
        else:
            return None
        op = kernels.op_named(name) if name else None
        if op is None or receiver is not None and code(receiver) == SELF:
            return None
        bound = kernels.bind(op, list(call.args), receiver)
        if not kernels.is_identity(op, bound, node.targets[0].target):
            return None
        api = func or f"torch.Tensor.{name}"
        return statements.Dropped(f"drop the statement: {api} is its input elsewhere, and it is assigned back to it",
                                  api, changes.KERNELS)

    def _drop(self, node, why: statements.Dropped | None) -> bool:
        """Whether to walk on into `node` (not into a statement that goes)."""
        if why is None:
            return True
        self.edits.dropped.add(node)
        self.edits.row(self.line(node), why.code, Operation.DELETE, why.message, why.api)
        return False

    # -- calls: kernels, optimizers, methods, keywords --
    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        self.calls.append(node)
        func = self.imported(node.func)
        if func is not None and (self._kernel(node, func) or self._optimizer(node, func) or self._legacy_profiler(node, func)):
            return
        if isinstance(node.func, cst.Attribute) and not names.is_npu_name(func or ""):  # (`net.npu()`, net imported too)
            self._method(node, node.func)
        if func is not None:
            self._keywords(node, func)
            autograd_profiler.visit_call(self, node, func)
            if func in BINDS_DEVICE:
                self._backend_from_options(node, func)

    def _backend_from_options(self, node: cst.Call, func: str) -> None:
        """`init_process_group(backend=args.dist_backend)`: ModelZoo's launchers pass
        `--dist-backend 'hccl'`, which becomes nccl where the script runs (then the target's)."""
        given = argument(node, "backend", BACKEND_POSITIONS[func.rsplit(".", 1)[1]])
        if given is None or not isinstance(given.value, cst.Attribute) or self.imported(given.value) is not None:
            return
        value = code(given.value)
        new = cst.parse_expression(backend_given_when_run(value, names.BACKEND, f'"{names.CUDA_DIST_BACKEND}"'))
        self.change(given.value, lambda _: new, given, changes.BACKEND,
                    f"{value} names the backend where the script runs: {names.BACKEND} there becomes "
                    f"{names.CUDA_DIST_BACKEND}", value)

    def visit_DictElement(self, node: cst.DictElement) -> None:  # noqa: N802
        autograd_profiler.visit_dict_element(self, node)

    def _kernel(self, node: cst.Call, func: str) -> bool:
        name = names.kernel_name(func)
        if name is None or not kernels.is_kernel(name):
            return False
        self.skipped.add(node.func)
        op = kernels.op_named(name)
        if op is None:
            self.left(node, changes.KERNELS, f"{func}: {kernels.why_left_out(name)} (port it by hand)", func)
            return True
        self._convert_kernel(node, op, node.args, None, func)
        return True

    def _convert_kernel(self, node: cst.Call, op, args, receiver, api: str) -> None:
        parent = self.parent(node)
        first = isinstance(parent, cst.Subscript) and _is_first(parent) and op.inline_first is not None
        bound = kernels.bind(op, list(args), receiver)
        template = kernels.template_for(op, bound, first) if bound is not None else None
        note = f" ({op.note})" if op.note else ""
        if template is not None:
            self.edits.modules |= kernels.modules_of_template(template, op)
            where = parent if first else node
            around = self.parent(where)

            def fix(updated, template=template):
                call = updated.value if first else updated
                receiver_now = call.func.value if receiver is not None else None
                bound_now = kernels.bind(op, list(call.args), receiver_now)
                if bound_now is None:  # (an argument rewritten into a form it no longer matches: kept)
                    return updated
                return kernels.standing(kernels.filled(template, bound_now), around)

            shown = template.format(**{name: name for name in op.parameters})
            self.change(where, fix, node, changes.KERNELS, f"{api}{'(...)[0]' if first else ''} -> {shown}{note}", api)
            return
        self._point_at_helper(node, op, receiver, api, note)

    def _point_at_helper(self, node: cst.Call, op, receiver, api: str, note: str) -> None:
        source, modules = kernels.helper(op.name)
        if op.name not in self.edits.helpers:
            self.edits.helpers[op.name] = source
            self.edits.row(self.line(node), changes.KERNELS, Operation.INSERT,
                           f"write {op.name}, torch_npu's kernel as torch code, after the imports", api)
        self.edits.modules |= modules

        def point(updated: cst.Call) -> cst.Call:
            if receiver is None:
                return updated.with_changes(func=cst.Name(op.name))
            return updated.with_changes(func=cst.Name(op.name), args=[cst.Arg(updated.func.value), *updated.args])

        self.change(node, point, node, changes.KERNELS, f"{api} -> {op.name}, its torch computation written into "
                    f"the file{note}", api)

    def _legacy_profiler(self, node: cst.Call, func: str) -> bool:
        """torch.npu.profile(path), torch_npu 1.x's: CUDA's device-profiler context, which takes no arguments."""
        new = npu_facts.LEGACY_PROFILER_CALLS.get(names.canonical(func))
        if new is None:
            return False
        self.skipped.update([node.func, *node.args])  # (the call goes whole, its arguments with it)
        self.edits.modules.add("torch")
        self.change(node, lambda _: cst.parse_expression(f"{new}()"), node, changes.PROFILER,
                    f"{func}(...) -> {new}(): torch_npu 1.x's device-profiler context; CUDA's records for its own "
                    "tools and takes no path", func)
        return True

    def _optimizer(self, node: cst.Call, func: str) -> bool:
        found = optimizers.constructor(func)
        if found is None:
            return False
        self.skipped.add(node.func)
        new, why = optimizers.replacement(found, node, self.target)
        self.edits.modules.add(new.rpartition(".")[0])
        self.change(node.func, lambda _: cst.parse_expression(new), node, changes.OPTIMIZERS,
                    f"{func} -> {new}: {why}", func)
        return True

    def _method(self, node: cst.Call, func: cst.Attribute) -> None:
        attr = func.attr.value
        if attr == names.METHOD:
            self.change(func, lambda u: u.with_changes(attr=cst.Name(names.CUDA_METHOD)), node, changes.METHODS,
                        f".{attr}() -> .{names.CUDA_METHOD}()", f"torch.Tensor.{attr}")
        elif attr == optimizers.CLIP:
            self._clip(node, func)
        elif attr == contiguous.VIEW:
            contiguous.visit_view(self, node, func)
        elif kernels.op_named(attr) is not None and self.imported(func.value) is None and code(func.value) != SELF:
            # (torch_npu's Tensor methods: x.npu_format_cast(29))
            self._convert_kernel(node, kernels.op_named(attr), node.args, func.value, f"torch.Tensor.{attr}")

    def _clip(self, node: cst.Call, func: cst.Attribute) -> None:
        receiver = code(func.value)
        if receiver not in self.optimizers:
            self.edits.row(self.line(node), changes.OPTIMIZERS, Operation.NOTE,
                           f"{receiver}.{optimizers.CLIP}: not an NpuFused optimizer made in this file; torch's "
                           f"optimizers lack it (torchport.optim's have it): clip with {optimizers.CLIP_FUNCTION}",
                           optimizers.CLIP)
            return
        self.edits.modules.add("torch")

        def fix(updated: cst.Call) -> cst.Call:
            held = code(updated.func.value)
            parameters = cst.parse_expression(f'[p for group in {held}.param_groups for p in group["{optimizers.PARAMS}"]]')
            return updated.with_changes(func=cst.parse_expression(optimizers.CLIP_FUNCTION),
                                        args=[cst.Arg(parameters), *updated.args])

        self.change(node, fix, node, changes.OPTIMIZERS,
                    f"{receiver}.{optimizers.CLIP}(...) -> {optimizers.CLIP_FUNCTION} over its parameters", optimizers.CLIP)

    def _keywords(self, node: cst.Call, func: str) -> None:
        dropped = set(names.tuning_keywords(func))
        code_ = changes.TUNING
        if func == f"{names.NPU.profiler_module}.profile":
            dropped.add(npu_facts.PROFILER_CONFIG_KEYWORD)
            code_ = changes.PROFILER
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in dropped:
                self.skipped.add(arg)
                self.edits.dropped.add(arg)  # (what it reads is no use of torch_npu's left)
                keyword = arg.keyword.value
                self.change(node, _without_keyword(keyword), arg, code_,
                            f"drop {keyword}= of {func}: the NPU's own, nothing like it elsewhere", func, Operation.DELETE)

    # -- names: torch.npu.X, torch_npu.npu.X, the profiler, x.is_npu --
    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if not self.outermost(node) or not self.loaded(node):
            return
        qualified = self.imported(node)
        if qualified is not None:
            self._name(node, qualified)
        elif node.attr.value == names.IS_METHOD:
            self.change(node, lambda u: u.with_changes(attr=cst.Name(names.CUDA_IS)), node, changes.METHODS,
                        f".{names.IS_METHOD} -> .{names.CUDA_IS}", f"torch.Tensor.{names.IS_METHOD}")

    def visit_Name(self, node: cst.Name) -> None:  # noqa: N802
        if self.outermost(node) and self.loaded(node):
            qualified = self.imported(node)
            if qualified is not None:
                self._name(node, qualified)

    def _name(self, node: cst.CSTNode, qualified: str) -> None:
        found = optimizers.constructor(qualified)
        if found is not None:
            new, why = optimizers.replacement(found, None, self.target)
            self.edits.modules.add(new.rpartition(".")[0])
            self.change(node, lambda _: cst.parse_expression(new), node, changes.OPTIMIZERS, f"{qualified} -> {new}: {why}",
                        qualified)
            return
        if not names.is_npu_name(qualified):
            return
        new = names.cuda_api(qualified)
        profiler = qualified.startswith(f"{names.NPU.profiler_module}.")
        code_ = changes.PROFILER if profiler else changes.DEVICE_API
        if new is None:
            if profiler:
                what = "torch.profiler has no such name"
            elif names.canonical(qualified).startswith(names.NPU.device_module + "."):
                what = "torch.cuda has no such API"
            elif names.is_plugin(qualified):
                what = "an Ascend adapter's own, nothing of torch stands for it"
            else:
                what = "torch_npu's own, nothing of torch stands for it"
            self.left(node, code_, f"{names.canonical(qualified)}: {what}", qualified)
            return
        self.edits.modules.add("torch")
        self.change(node, lambda _: cst.parse_expression(new), node, code_, f"{qualified} -> {new}", qualified)

    # -- strings: devices, the backend, the environment --
    def visit_SimpleString(self, node: cst.SimpleString) -> None:  # noqa: N802
        strings.visit(self, node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:  # noqa: N802
        strings.visit_formatted(self, node)


def _is_first(subscript: cst.Subscript) -> bool:
    """`call[0]`."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    value = subscript.slice[0].slice.value
    return isinstance(value, cst.Integer) and value.value == "0"


def _without_keyword(keyword: str):
    """The call without its `keyword=` argument, the spacing before its closing parenthesis kept."""
    def fix(updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        at = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == keyword), None)
        if at is None:
            return updated
        gone = args.pop(at)
        if at == len(args) and args:
            args[-1] = args[-1].with_changes(comma=gone.comma)
        return updated.with_changes(args=args)

    return fix
