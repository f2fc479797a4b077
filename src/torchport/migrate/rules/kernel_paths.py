"""TP037: kernel paths the target lacks or takes with a caveat: Triton kernels, FP8, FlexAttention,
torch.compile and its CUDA graphs, and an SDPA kernel choice the target has no kernel for."""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from torchport.apis import kernel_paths as paths
from torchport.findings import Operation
from torchport.migrate.rules.base.rule import Rule
from torchport.string_literals import string_value


class KernelPathRule(Rule):
    """Code written for CUDA's compilers and number formats, which other devices lack or run
    otherwise (`Target.kernel_paths`, facts in apis/kernel_paths.py):
    - a function decorated `@triton.jit` / `@triton.autotune` / `@triton.heuristics`: a Triton kernel;
      `@cute.jit` / `@cute.kernel` (CUTLASS's CuTe DSL), `@tilelang.jit`: the same for those languages;
    - Hugging Face's kernel hub (`kernels.get_kernel`), whose builds are per backend;
    - FP8: `torch._scaled_mm`, the float8 dtypes, torchao's float8 training;
    - FlexAttention (`flex_attention`, `create_block_mask`);
    - `torch.compile`, and its modes `reduce-overhead` / `max-autotune`, which capture CUDA graphs;
    - scaled_dot_product_attention's kernel choice (`sdpa_kernel`, `torch.backends.cuda.sdp_kernel`,
      `enable_*_sdp(False)`) that leaves only kernels the target's device has none of (torch's kernel
      data: the CPU has the flash and math kernels, not the memory-efficient or cuDNN ones), where
      every call inside raises "No viable backend".
    Rows only: the way out (the project's torch reference path, bfloat16, a materialised mask,
    torchair, the math kernel) is a person's choice."""

    code = "TP037"
    order = 1006
    mentions = (rb"\btriton\b|\bcute\b|\btilelang\b|get_(local_)?kernel\b|float8|_scaled_(grouped_)?mm\b|flex_attention|create_block_mask|torch\.compile\b"
                rb"|sdp_kernel|sdpa_kernel|_sdp\(")
    reads = ("torch.float8", "torch._scaled", "torch.nn.attention", "torch.compile", "torch.backends.cuda")
    title = "kernel paths the target lacks"
    readme = """Triton kernels (`@triton.jit`; CuTe DSL and TileLang kernels too), Hub kernels (`get_kernel`), FP8 (`torch._scaled_mm`, float8 dtypes), FlexAttention, `torch.compile` and its
    CUDA-graph modes, on a target that lacks them or runs them otherwise (npu: triton-ascend, no FP8 on Atlas A2,
    torchair; cpu and mps: no Triton); an SDPA kernel choice (`sdpa_kernel`, `sdp_kernel`) that leaves only kernels the
    target has none of: an UNSUPPORTED row or a NOTE with the way out"""
    sample = "import triton\n\n\n@triton.jit\ndef add_kernel(x_ptr, n):\n    pass\n"

    @classmethod
    def applies_to(cls, target) -> bool:
        return bool(target.kernel_paths) or sdpa_kernels(target) is not None

    def __init__(self, context) -> None:
        super().__init__(context)
        self._fp8_calls = 0  # inside an FP8 call (its float8 dtypes are that call's row)

    # -- Triton kernels and torch.compile as decorators
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:  # noqa: N802
        for decorator in node.decorators:
            called = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            name = self.imported_name(called)
            if name in paths.KERNEL_DECORATORS:
                path = paths.KERNEL_DECORATORS[name]
                self._row(node, path, f"{node.name.value} is one of the {path} ({name})", name)
                return
            if not isinstance(decorator.decorator, cst.Call) and self.qualified_name(called) == paths.COMPILE_API:
                self._row(decorator, paths.COMPILE, "torch.compile", paths.COMPILE_API)

    # -- calls: FP8, FlexAttention, torch.compile, the SDPA choice
    def visit_Call(self, node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(node.func) or self.imported_name(node.func)
        if api in paths.FP8_APIS:
            self._fp8_calls += 1
            self._row(node, paths.FP8, api, api)
        elif api in paths.HUB_KERNEL_APIS:
            self._row(node, paths.HUB_KERNELS, api, api)
        elif api in paths.FLEX_ATTENTION_APIS:
            self._row(node, paths.FLEX_ATTENTION, api, api)
        elif api == paths.COMPILE_API:
            mode = next((string_value(a.value) for a in node.args if a.keyword and a.keyword.value == "mode"), None)
            if mode in paths.CUDA_GRAPH_MODES and paths.CUDA_GRAPHS in self.target.kernel_paths:
                self._row(node, paths.CUDA_GRAPHS, f'torch.compile(mode="{mode}")', api)
            else:
                self._row(node, paths.COMPILE, "torch.compile", api)
        elif api in (paths.SDPA_KERNEL, paths.SDP_KERNEL) or api in paths.SDP_SWITCHES:
            self._sdpa_choice(node, api)

    def leave_Call(self, original_node: cst.Call) -> None:  # noqa: N802
        api = self.qualified_name(original_node.func) or self.imported_name(original_node.func)
        if api in paths.FP8_APIS:
            self._fp8_calls -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:  # noqa: N802
        if node.attr.value.startswith("float8_") and not self._fp8_calls:
            api = self.qualified_name(node)
            if api in paths.FP8_DTYPES:
                self._row(node, paths.FP8, api, api)

    def _row(self, node: cst.CSTNode, path: str, what: str, api: str) -> None:
        said = self.target.kernel_paths.get(path)
        if said is not None:
            operation = Operation.UNSUPPORTED if said.lacks else Operation.NOTE
            self.report(node, operation, f"{what} on {self.target.name}: {said.why}", api=api)

    def _sdpa_choice(self, node: cst.Call, api: str) -> None:
        has = sdpa_kernels(self.target)
        if has is None:
            return
        if api in paths.SDP_SWITCHES:
            backend, on = paths.SDP_SWITCHES[api], _first_argument_true(node)
            if on is False and backend in has:
                others = ", ".join(sorted(has - {backend}))
                self.report(node, Operation.NOTE, f"turns off SDPA's {backend} kernel, one of the {self.target.name}'s "
                            f"({', '.join(sorted(has))}): with {others} off too, scaled_dot_product_attention raises "
                            "'No viable backend' there", api=api)
            return
        chosen = _chosen_backends(node, api)
        if chosen is not None and not chosen & has:
            self.report(node, Operation.UNSUPPORTED,
                        f"the SDPA kernels chosen ({', '.join(sorted(chosen)) or 'none'}) have no {self.target.name} "
                        f"kernel (it has {', '.join(sorted(has))}): scaled_dot_product_attention raises 'No viable "
                        f"backend' under this choice; add MATH to it", api=api)


def _first_argument_true(node: cst.Call) -> bool | None:
    if not node.args or not isinstance(node.args[0].value, cst.Name):
        return None
    return {"True": True, "False": False}.get(node.args[0].value.value)


def _chosen_backends(node: cst.Call, api: str) -> frozenset[str] | None:
    """The SDPA kernels a choice leaves on, where the call spells them out (None where it does not)."""
    if api == paths.SDP_KERNEL:
        chosen = set(paths.SDP_KERNEL_KEYWORDS.values())  # (each defaults to True)
        for arg in node.args:
            if arg.keyword is None:
                return None
            backend = paths.SDP_KERNEL_KEYWORDS.get(arg.keyword.value)
            if backend is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False":
                chosen.discard(backend)
            elif backend is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                return None
        return frozenset(chosen)
    if not node.args:
        return None
    value = node.args[0].value
    items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    if not all(isinstance(item, cst.Attribute) and item.attr.value in paths.SDPA_BACKEND_OPERATORS for item in items):
        return None
    return frozenset(item.attr.value for item in items)


def sdpa_kernels(target) -> frozenset[str] | None:
    """The SDPA kernels `target`'s device has, where torch's own choice picks among them there and
    the kernel data says of each (the CPU: FLASH_ATTENTION and MATH); None otherwise (torch_npu
    chooses among its own; XPU's kernels are listed elsewhere; code for CUDA has them all)."""
    return None if target.kernels is None else _sdpa_kernels(target.kernels)


@lru_cache(maxsize=None)
def _sdpa_kernels(listed) -> frozenset[str] | None:
    from torchport.ops import kernels
    from torchport.targets.kernels import CUDA

    if listed.key == CUDA.key or listed.own_data is not None:
        return None
    data = kernels.default()
    if data.operator_support(paths.SDPA_CHOICE_OPERATOR, listed.key).supported is not True:
        return None
    has = {"MATH"}
    for backend, operators in paths.SDPA_BACKEND_OPERATORS.items():
        answers = [data.operator_support(operator, listed.key).supported for operator in operators]
        if any(answer is None for answer in answers) and not any(answers):
            return None
        if any(answers):
            has.add(backend)
    return frozenset(has)
