"""Whether a DataLoader feeds training or validation, read from what the script says of it.

The evidence, strongest first: the loader's own name (`train_loader`, `val_loader`, the key of a
dict of splits), what its dataset is (`train_set`, `CIFAR10(..., train=False)`,
`ImageFolder(os.path.join(root, "val"))`), whether it shuffles (evaluation never needs to), and how
the script uses it (iterated in a loop that calls `backward()`, or passed to `evaluate(...)`).
What says nothing is left undecided; the step then looks at the file as a whole (its only loader
trains).
"""

from __future__ import annotations

import re

import libcst as cst

TRAIN, VALIDATION = "train", "validation"

_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Words that name an evaluation split; a word that starts with one of these says validation
# (`valset`, `testloader`, `evaluation`), unless it is one of the look-alikes after it.
_VALIDATION_WORDS = ("val", "test", "eval", "dev", "query", "gallery", "holdout", "infer", "predict", "calib")
_LOOK_ALIKES = ("value", "device", "devs")
# Keywords of dataset constructors that name the split (`split="val"`, `image_set="train"`).
_SPLIT_KEYWORDS = {"split", "image_set", "subset", "mode", "phase", "set_name", "stage"}


def words(text: str) -> list[str]:
    """`train_loader` -> ['train', 'loader']; `valLoader` -> ['val', 'loader']."""
    return [w.lower() for w in _TOKEN.findall(text)]


def role_of_words(text: str) -> str:
    """TRAIN or VALIDATION where `text` (a name, a string) says which, else ""."""
    tokens = words(text)
    if any("train" in w for w in tokens):
        return TRAIN
    if any(w.startswith(_VALIDATION_WORDS) and not w.startswith(_LOOK_ALIKES) for w in tokens):
        return VALIDATION
    return ""


def role_of_dataset(expr: cst.BaseExpression) -> str:
    """What a dataset expression says of its split: `train=False`, `split="val"`, then its names
    and strings (`valdir`, `os.path.join(root, "train")`)."""
    for node in _walk(expr):
        if isinstance(node, cst.Arg) and node.keyword is not None:
            if node.keyword.value == "train" and isinstance(node.value, cst.Name) and node.value.value in ("True", "False"):
                return TRAIN if node.value.value == "True" else VALIDATION
            if node.keyword.value in _SPLIT_KEYWORDS and isinstance(node.value, cst.SimpleString):
                said = role_of_words(node.value.evaluated_value)
                if said:
                    return said
    return role_of_words(" ".join(_names_and_strings(expr)))


def role_of_shuffle(value: cst.BaseExpression | None) -> str:
    """`shuffle=True` says training; anything else says nothing (evaluation loaders and training
    loaders with a sampler both leave it off)."""
    return TRAIN if isinstance(value, cst.Name) and value.value == "True" else ""


def _names_and_strings(expr: cst.CSTNode) -> list[str]:
    found = []
    for node in _walk(expr):
        if isinstance(node, cst.Name) and node.value not in ("True", "False", "None"):
            found.append(node.value)
        elif isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            found.append(value if isinstance(value, str) else "")
    return found


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


# -- how the script uses a loader it binds to a name ------------------------------------------------

_STEP_CALLS = ("backward", "step")  # loss.backward(), optimizer.step(): a loop that trains
_NO_GRAD = ("no_grad", "inference_mode")


def role_of_use(module: cst.Module, name: str) -> str:
    """How `name` is used in `module`: iterated by a loop that calls backward()/step() (TRAIN),
    iterated under no_grad() (VALIDATION), or passed to a function whose name says which
    (`train(model, loader)`, `evaluate(model, loader)`)."""
    said = set()
    _uses(module, name, said, under_no_grad=False)
    return TRAIN if TRAIN in said and VALIDATION not in said else VALIDATION if said == {VALIDATION} else ""


def _uses(node: cst.CSTNode, name: str, said: set, under_no_grad: bool) -> None:
    if isinstance(node, cst.With) and any(_calls_named(item.item, _NO_GRAD) for item in node.items):
        under_no_grad = True
    elif isinstance(node, cst.FunctionDef) and role_of_words(node.name.value) == VALIDATION:
        under_no_grad = True
    if isinstance(node, cst.For) and _mentions(node.iter, name):
        if under_no_grad:
            said.add(VALIDATION)
        elif _calls_named(node.body, _STEP_CALLS):
            said.add(TRAIN)
    if isinstance(node, cst.Call) and any(_mentions(arg.value, name, bare=True) for arg in node.args):
        callee = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
        if isinstance(callee, str) and role_of_words(callee):
            said.add(role_of_words(callee))
    for child in node.children:
        _uses(child, name, said, under_no_grad)


def _mentions(expr: cst.CSTNode, name: str, bare: bool = False) -> bool:
    """`name` itself, or (unless `bare`) as an argument of the call it is in: `enumerate(name)`, `tqdm(name)`."""
    if isinstance(expr, cst.Name):
        return expr.value == name
    if not bare and isinstance(expr, cst.Call):
        return any(_mentions(arg.value, name) for arg in expr.args)
    return False


def _calls_named(node: cst.CSTNode, attrs: tuple[str, ...]) -> bool:
    for inner in _walk(node):
        if isinstance(inner, cst.Call):
            func = inner.func
            called = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if called in attrs:
                return True
    return False
