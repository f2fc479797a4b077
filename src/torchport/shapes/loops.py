"""Find a script's training loop and wrap it in `DETECTOR.start(...)`, with no edit by hand.

Ascend's detector makes the user rewrite the loop themselves. Here the loop is found from the
source: a `for` loop is a *training loop* when its body reaches `.backward()` or an optimizer's
`.step()`, directly or through functions and methods of the same file that it calls. An epoch
loop reaches them too, but only by repeating an inner loop that does all it does; such repeating
loops are set aside, and of the rest the outermost are wrapped. So `for epoch ...: for batch ...`
wraps the batch loop, a gradient-accumulation loop inside the batch loop is left alone, and a loop
in `train_one_epoch()` is found from the call in the epoch loop.

The copy keeps every line where it was, so that what the detector reports (file, line) is the
user's line in the original too: the import is put on the line of the file's first import
(`from torchport.shapes import DETECTOR; import torch`), and the loop's iterable is wrapped in
place. Only the standard library is used here: `torchport analyze` imports this without torch.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

BACKWARD, STEP = "backward", "optimizer step"
IMPORT = "from torchport.shapes import DETECTOR; "
INLINE_DETECTOR = '__import__("torchport.shapes", fromlist=["DETECTOR"]).DETECTOR'
MANUAL_EDIT = "for batch in DETECTOR.start(loader):  (after: from torchport.shapes import DETECTOR)"
_NEWLINE = re.compile(r"\r\n|\r|\n")  # what Python's tokenizer ends a line with (not \f, \x1c, ...)
# `.step()` counts as an optimizer's when its receiver is named like one (`scheduler.step()` is not).
_OPTIMIZER_NAME = re.compile(r"(optim|^opt$|^opt_|_opt$|^scaler$)", re.IGNORECASE)


@dataclass(frozen=True)
class TrainingLoop:
    """A `for` loop found to be a training loop: where it is and what its body reaches."""

    line: int
    col: int  # of the iterable, in UTF-8 bytes (as ast counts)
    header: str  # the loop's first line, stripped: for the messages
    reaches: frozenset[str]
    wrapped: bool  # already `for ... in DETECTOR.start(...)`


def find_training_loops(source: bytes | str, path: str = "<string>") -> list[TrainingLoop]:
    """The training loops of `source` that `instrument_source` wraps, in source order.
    Raises SyntaxError when the source does not parse."""
    tree = ast.parse(source, filename=path)
    lines = _NEWLINE.split(_text(source) if isinstance(source, bytes) else source)
    return [_describe(loop, reach, lines) for loop, reach in _CallGraph(tree).training_loops()]


def instrument_source(source: bytes, path: str) -> bytes | None:
    """`source` with its training loops wrapped in `DETECTOR.start(...)` and DETECTOR imported,
    every line where it was; None when no training loop is found. The encoding (a coding cookie,
    a BOM) and the line endings are kept. Raises SyntaxError when the source does not parse."""
    tree = ast.parse(source, filename=path)
    found = _CallGraph(tree).training_loops()
    if not found:
        return None
    todo = [loop for loop, _ in found if not _already_wrapped(loop)]
    if not todo:
        return source
    encoding = _encoding(source)
    text = source.decode(encoding)
    edits = _import_edit(tree, text)
    detector = "DETECTOR" if edits else INLINE_DETECTOR
    for loop in todo:
        edits += _wrap_edits(loop.iter, text, detector)
    return _apply(text, edits).encode(encoding)


def why_no_training_loop(source: bytes | str, path: str = "<string>") -> str | None:
    """Why `instrument_source` wraps no loop in a file that trains (it calls `.backward()` or an
    optimizer's `.step()` somewhere); None where a loop is found, or where the file trains
    nothing (most files of a tree: nothing to say). Raises SyntaxError as the others do."""
    graph = _CallGraph(ast.parse(source, filename=path))
    if graph.training_loops():
        return None
    marks = sorted(set().union(*(_marks(call) for call in _calls(graph.tree.body)),
                               *(graph.reach(f.body) for f in _all_functions(graph))))
    if not marks:
        return None
    what = " and ".join(_SPELLED[mark] for mark in marks)
    if any(graph.reach(loop.body) for loop in ast.walk(graph.tree) if isinstance(loop, ast.For)):
        return f"every for loop that reaches {what} runs another one that does too (read as epoch loops)"
    return f"it calls {what}, but in no for loop: in a while loop, or in a function no for loop of the file calls"


_SPELLED = {BACKWARD: ".backward()", STEP: "an optimizer's .step()"}


def _all_functions(graph: _CallGraph):
    for functions in (*graph.functions.values(), *graph.methods.values()):
        yield from functions


# --- which loops -------------------------------------------------------------------------------


class _CallGraph:
    """Functions of one file by name, what each reaches, and the loops inside each."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.functions: dict[str, list[ast.AST]] = {}  # called by their name: `f(...)`
        self.methods: dict[str, list[ast.AST]] = {}  # called on an object: `obj.f(...)`
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kind = self.methods if isinstance(node, ast.ClassDef) else self.functions
                    kind.setdefault(child.name, []).append(child)
        self._reach: dict[int, frozenset[str]] = {}
        self._loops_below: dict[int, list[ast.For]] = {}

    def training_loops(self) -> list[tuple[ast.For, frozenset[str]]]:
        loops = [node for node in ast.walk(self.tree) if isinstance(node, ast.For)]
        reach = {id(loop): self.reach(loop.body) for loop in loops}
        steps = [loop for loop in loops if reach[id(loop)]]
        # An epoch loop: some loop below it reaches all that it reaches (not the loop itself, nor
        # a loop around it, met again through a call that leads back to them).
        around = _enclosing_loops(self.tree)
        kept = [loop for loop in steps
                if not any(reach[id(inner)] >= reach[id(loop)] for inner in self.loops_below(loop.body)
                           if inner is not loop and id(inner) not in around[id(loop)])]
        inner = {id(below) for loop in kept for below in self.loops_below(loop.body) if below is not loop}
        chosen = [loop for loop in kept if id(loop) not in inner]
        return sorted(((loop, reach[id(loop)]) for loop in chosen), key=lambda pair: pair[0].lineno)

    def reach(self, body: list[ast.stmt]) -> frozenset[str]:
        """What running `body` reaches: BACKWARD, STEP, through the file's functions it calls."""
        found: set[str] = set()
        for call in _calls(body):
            found |= _marks(call)
            for function in self._callees(call):
                found |= self._function_reach(function)
        return frozenset(found)

    def loops_below(self, body: list[ast.stmt]) -> list[ast.For]:
        """The loops that running `body` runs: nested ones, and those in the functions it calls."""
        below: list[ast.For] = []
        for node in _own_nodes(body):
            if isinstance(node, ast.For):
                below.append(node)
        for call in _calls(body):
            for function in self._callees(call):
                below += self._function_loops(function)
        return below

    def _function_reach(self, function) -> frozenset[str]:
        key = id(function)
        if key not in self._reach:
            self._reach[key] = frozenset()  # a recursive call reaches nothing more
            self._reach[key] = self.reach(function.body)
        return self._reach[key]

    def _function_loops(self, function) -> list[ast.For]:
        key = id(function)
        if key not in self._loops_below:
            self._loops_below[key] = []
            self._loops_below[key] = self.loops_below(function.body)
        return self._loops_below[key]

    def _callees(self, call: ast.Call) -> list[ast.AST]:
        """The file's functions a call may run: `f(...)` the functions named f, `obj.f(...)` the
        methods named f (YOLOv5's `callbacks.run(...)` is not train.py's own `def run()`)."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions.get(func.id, [])
        if isinstance(func, ast.Attribute):
            return self.methods.get(func.attr, [])
        return []


def _enclosing_loops(tree: ast.Module) -> dict[int, set[int]]:
    """For each `for` loop (by id), the ids of the `for` loops of the same function around it."""
    around: dict[int, set[int]] = {}
    stack: list[tuple[ast.AST, frozenset[int]]] = [(tree, frozenset())]
    while stack:  # (not recursive: a file nests deeper than Python's recursion limit allows)
        node, outer = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            outer = frozenset()
        if isinstance(node, ast.For):
            around[id(node)] = set(outer)
            outer = outer | {id(node)}
        stack.extend((child, outer) for child in ast.iter_child_nodes(node))
    return around


def _own_nodes(body: list[ast.stmt]):
    """Every node of `body`, not entering nested function or class definitions (their bodies run
    only when called, and a call is followed through `_callees`)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _calls(body: list[ast.stmt]):
    return (node for node in _own_nodes(body) if isinstance(node, ast.Call))


def _marks(call: ast.Call) -> set[str]:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return set()
    if func.attr == "backward":  # loss.backward(), scaler.scale(loss).backward(), accelerator.backward(loss)
        return {BACKWARD}
    if func.attr == "optimizer_step":  # torch_xla's xm.optimizer_step(optimizer)
        return {STEP}
    if func.attr == "step" and _OPTIMIZER_NAME.search(_last_name(func.value)):
        return {STEP}
    return set()


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # optimizers[0].step()
        return _last_name(node.value)
    return ""


def _already_wrapped(loop: ast.For) -> bool:
    it = loop.iter
    return (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "start"
            and isinstance(it.func.value, (ast.Name, ast.Attribute)) and _last_name(it.func.value) == "DETECTOR")


def _describe(loop: ast.For, reach: frozenset[str], lines: list[str]) -> TrainingLoop:
    header = lines[loop.lineno - 1].strip() if loop.lineno <= len(lines) else "for ..."
    return TrainingLoop(loop.lineno, loop.iter.col_offset, header, reach, _already_wrapped(loop))


# --- the edit, in place ----------------------------------------------------------------------


def _encoding(source: bytes) -> str:
    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:
        return "utf-8"


def _text(source: bytes) -> str:
    return source.decode(_encoding(source), errors="replace")


def _import_edit(tree: ast.Module, text: str) -> list[tuple[int, int, str]]:
    """Put the import in front of the file's first top-level import (after `__future__` ones), on
    its line. A file with none gets no import: the loop then names the detector inline."""
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            continue
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            return [(_offset(text, statement.lineno, statement.col_offset), 0, IMPORT)]
    return []


def _wrap_edits(node: ast.expr, text: str, detector: str) -> list[tuple[int, int, str]]:
    start = _offset(text, node.lineno, node.col_offset)
    end = _offset(text, node.end_lineno, node.end_col_offset)
    bare_tuple = isinstance(node, ast.Tuple) and text[start] != "("  # for x in a, b:
    opening, closing = (f"{detector}.start((", "))") if bare_tuple else (f"{detector}.start(", ")")
    return [(start, 0, opening), (end, 0, closing)]


def _offset(text: str, line: int, byte_col: int) -> int:
    """The index in `text` of (line, UTF-8 byte column), as ast reports positions."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    return start + len(text[start:end].encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for offset, removed, inserted in sorted(edits, key=lambda edit: edit[0], reverse=True):
        text = text[:offset] + inserted + text[offset + removed:]
    return text
