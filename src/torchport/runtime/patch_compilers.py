"""TorchScript and torch.compile see through the patches; installed last, after every other family.

TorchScript resolves a Python global such as `torch.ones_like` to an aten operator by the object's
identity (`torch.jit._builtins._find_builtin`). A wrapper is a new object, which TorchScript would try
to compile from its source and fail on (`expected ... got builtin_function_or_method`: timm's
`@torch.jit.script` activations broke at import). So every replacement whose original TorchScript
knows as a builtin is registered as that same builtin, through the patch book: `undo()` removes
the registrations with the patches.

Scripted code then calls the operator itself, and no wrapper sees the device values written in it.
So `torch.jit.script` is wrapped too: in the graphs it compiles for code outside torch (with every
function and submodule compiled along with it) CUDA device constants (`torch.zeros(2,
device="cuda")`, `torch.device("cuda:1")`, `x.to("cuda")`) become the target's and `x.cuda()`
becomes `x.to(<target>)`, as the wrappers would do in eager mode; each rewritten line is logged once.
The rewrite stays in the compiled code after `undo()`. Device values computed at run time
(`torch.device(name)` of a variable), scripted classes and `torch.jit.load`ed code are not rewritten.

torch.compile (Dynamo) traces Python functions, a wrapper among them; where a wrapper reads a frame
(to log, or to tell the script's calls from torch's) it carries a twin that Dynamo traces instead
(`traced_as`). `proxies.class_proxy` makes `torch.device` compare equal to the real class for the
torch code that reads it at run time (FX's code generator, Dynamo's constant types).
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import threading

from torchport.runtime.after_import import hook_import
from torchport.runtime.calllog import short_path
from torchport.runtime.callers import top_package
from torchport.runtime.devices import cuda_index
from torchport.runtime.patchbook import ABSENT
from torchport.targets.verdict import Kind, Verdict

ORDER = 1000  # installed last: it tells TorchScript what each replacement made before it stands for
_SOURCE = re.compile(r'File "([^"]+)", line (\d+)')


def traced_as(wrapper, twin):
    """Have torch.compile (Dynamo) trace `twin` wherever it meets `wrapper`, through the attribute
    that torch.jit.script and torch.compile give their own wrappers (`_torchdynamo_inline`). A twin
    does what its wrapper does but logs nothing: Dynamo cannot trace reading a frame."""
    wrapper._torchdynamo_inline = twin
    return wrapper


def install(session) -> None:
    import torch

    _register_builtins(session)
    _patch_annotations(session, torch)
    _patch_script(session, torch)
    _dynamo_sees_torch_unpatched(session)


def _register_builtins(session) -> None:
    """Each replacement is the builtin its original is (`torch.device` -> aten::device, ...)."""
    from torch.jit import _builtins

    table = _builtins._get_builtin_table()  # built when torch.jit is imported: before our patches
    for owner, name, original in session.book.patched():
        if original is ABSENT:
            continue
        operator = table.get(id(original))
        replacement = vars(owner).get(name)
        if operator is not None and replacement is not None and id(replacement) not in table:
            session.book.register(table, id(replacement), operator)


def _patch_annotations(session, torch) -> None:
    """TorchScript reads `d: torch.device` by identity (`ann is torch.device`), and `torch.device`
    is a proxy now: an annotation written with the real class (in code defined before the patch,
    or in torch itself) is read as the proxy, which TorchScript then finds to be `torch.device`."""
    import torch.jit.annotations as annotations

    proxies = [(original, vars(torch)[name]) for owner, name, original in session.book.patched()
               if owner is torch and isinstance(original, type)
               and getattr(vars(torch).get(name), "__wrapped__", None) is original]
    if not proxies:
        return
    original = annotations.try_ann_to_type

    @functools.wraps(original)
    def try_ann_to_type(ann, loc, rcb=None):
        for real, proxy in proxies:
            if ann is real:
                ann = proxy
                break
        return original(ann, loc, rcb)

    session.book.replace(annotations, "try_ann_to_type", try_ann_to_type)


def _patch_script(session, torch) -> None:
    import torch.jit._script as script_module

    original = script_module.script
    devices = ScriptDevices(session)
    state = threading.local()  # whether the outermost torch.jit.script call rewrites

    @functools.wraps(original)
    def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
        outer = getattr(state, "rewrite", None) is None
        if outer:  # torch's own scripted code keeps its "cuda" (see torch.device in patch_devices)
            state.rewrite = top_package(sys._getframe(1)) != "torch"
        try:
            compiled = original(obj, optimize=optimize, _frames_up=_frames_up + 1, _rcb=_rcb,
                                example_inputs=example_inputs)
            if state.rewrite:
                devices.rewrite(compiled)
        finally:
            if outer:
                state.rewrite = None
        return compiled

    session.book.replace_everywhere((torch.jit, script_module), "script", original, script)


def _dynamo_sees_torch_unpatched(session) -> None:
    """torch.compile (Dynamo) takes snapshots of torch: when it is imported (its table of how to
    trace each torch function, the functions it folds to constants, `torch.Tensor`'s methods) and
    on first use (special handlers). Taken under the patches, they would hold the replacements
    where torch's functions belong, and Dynamo would no longer recognise the originals that the
    twins call (`torch.is_autocast_enabled` would be put in the graph as an unknown op). So Dynamo
    is imported, and its lazy tables built, with the patches suspended: now if it is imported
    already, else through an import hook when it is (usually at the first torch.compile; for that
    second or so, another thread of the script would see torch unpatched)."""
    book = session.book
    if "torch._dynamo" in sys.modules:
        with book.suspended():
            _build_dynamo_tables()
        return

    def unpatched(execute, module) -> None:
        with book.suspended():
            execute()
            _build_dynamo_tables()

    hook_import("torch._dynamo", unpatched, book)


# Dynamo's tables made on first use (each a cached function of no arguments) that hold torch's
# functions and classes as objects: (module, function), built with the patches suspended. Those
# this torch lacks are skipped.
DYNAMO_TABLES = (
    ("torch._dynamo.trace_rules", "get_torch_obj_rule_map"),
    ("torch._dynamo.trace_rules", "get_tensor_method"),
    ("torch._dynamo.variables.torch", "tracing_state_functions"),
    ("torch._dynamo.variables.torch", "get_overridable_functions"),
    ("torch._dynamo.variables.torch", "TorchInGraphFunctionVariable._get_handlers"),
    ("torch._dynamo.variables.builtin", "BuiltinVariable._constant_fold_functions"),
    ("torch._dynamo.variables.builtin", "BuiltinVariable._fx_graph_functions"),
    ("torch._dynamo.variables.user_defined", "UserDefinedClassVariable._constant_fold_classes"),
    ("torch._dynamo.variables.user_defined", "UserDefinedClassVariable._in_graph_classes"),
    ("torch._dynamo.variables.user_defined", "UserDefinedClassVariable.supported_c_new_functions"),
    ("torch._dynamo.variables.nn_module", "UnspecializedNNModuleVariable._nn_module_method_ids"),
    ("torch.overrides", "get_ignored_functions"),
    ("torch.overrides", "get_default_nowrap_functions"),
    ("torch.overrides", "_get_overridable_functions"),
    ("torch.overrides", "_get_tensor_methods"),
)


def _build_dynamo_tables() -> None:
    for module, path in DYNAMO_TABLES:
        try:
            found = importlib.import_module(module)
            for part in path.split("."):
                found = getattr(found, part)
            found()
        except (ImportError, AttributeError, TypeError):
            continue


class ScriptDevices:
    """Rewrites the CUDA devices in compiled TorchScript graphs to the target's, in place."""

    def __init__(self, session) -> None:
        self.mapper = session.mapper
        self.log = session.log
        self.noted: set = set()  # (site, api) already in the log

    def rewrite(self, compiled) -> None:
        for graph in _graphs(compiled):
            self._block(graph, graph)

    def _block(self, graph, block) -> None:
        for node in list(block.nodes()):
            for inner in node.blocks():
                self._block(graph, inner)
            kind = node.kind()
            if kind == "prim::Constant" and node.output().type().kind() == "DeviceObjType":
                self._device_constant(node)
            elif kind == "aten::device":
                self._device_call(graph, node)
            elif kind == "aten::cuda":
                self._cuda_call(graph, node)

    def _device_constant(self, node) -> None:
        """`prim::Constant[value="cuda:1"]` of type Device: every use of it means the target's."""
        before = node.s("value")
        is_cuda, index = cuda_index(before)
        if not is_cuda:
            return
        after = self.mapper.spelling(index)
        node.s_("value", after)
        verdict = self.mapper.verdict("torch.device", before, after)
        for use in node.output().uses():
            self._note(use.user, verdict)

    def _device_call(self, graph, node) -> None:
        """`torch.device("cuda", 0)`, which TorchScript keeps as a call: its own new constant
        (string constants are shared, and another use may be `x.device.type == "cuda"`)."""
        source = node.inputsAt(0).node()
        if source.kind() != "prim::Constant" or source.output().type().kind() != "StringType":
            return
        before = source.s("value")
        is_cuda, index = cuda_index(before)
        if not is_cuda:
            return
        after = self.mapper.spelling(index) if node.inputsSize() == 1 else self.mapper.device_type
        with graph.insert_point_guard(node):
            node.replaceInput(0, graph.insertConstant(after))
        self._note(node, self.mapper.verdict("torch.device", before, after))

    def _cuda_call(self, graph, node) -> None:
        """`aten::cuda(x)` -> `aten::to(x, <target device>, None, False, False)`."""
        import torch

        after = self.mapper.spelling(None)
        with graph.insert_point_guard(node):
            device = graph.insertConstant(torch.device(after))
            false, none = graph.insertConstant(False), graph.insertConstant(None)
            moved = graph.insertNode(graph.create("aten::to", [node.inputsAt(0), device, none, false, false], 1))
        moved.copyMetadata(node)
        moved.output().setType(node.output().type())
        node.output().replaceAllUsesWith(moved.output())
        node.destroy()
        self._note(moved, Verdict("torch.Tensor.cuda", Kind.ADAPTED, f"torch.Tensor.to({after!r})",
                                  "in TorchScript"))

    def _note(self, node, verdict) -> None:
        found = _SOURCE.search(node.sourceRange())
        site = f"{short_path(found.group(1))}:{found.group(2)}" if found else "(TorchScript)"
        verdict = Verdict(f"TorchScript {verdict.api}", verdict.kind, verdict.replacement, verdict.note)
        if (site, verdict.api) not in self.noted:
            self.noted.add((site, verdict.api))
            self.log.note_at(site, verdict)


def _graphs(compiled) -> list:
    """The graphs of a scripted function, or of every method of a scripted module and its
    submodules (other results of torch.jit.script, such as classes, have none to rewrite)."""
    import torch

    if isinstance(compiled, torch.jit.ScriptFunction):
        return [compiled.graph]
    if isinstance(compiled, torch.jit.ScriptModule):
        return [module._c._get_method(name).graph
                for module in compiled.modules() for name in module._c._method_names()]
    return []
