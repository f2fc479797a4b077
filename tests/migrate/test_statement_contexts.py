"""Every rule's trigger in every statement context, on every target: no internal error, the output
compiles, and migrating it again changes nothing.

A rule that works at module level can still meet its statement as the whole of a one-line suite
(`if prof >= 0: torch.cuda.nvtx.range_push("forward")`), as the body of an `elif` or of a `case`,
inside a comprehension or a lambda. The triggers are the rules' own samples and the idioms the fuzz
test splices (tests/migrate/_idioms.py); the contexts are Python's statement and expression
contexts. One file per (context, target) holds every trigger, each in its own copy of the context;
where that file fails, each trigger is migrated alone so that the message names the culprits.
"""

from __future__ import annotations

import textwrap
import warnings

import libcst as cst
import pytest

from _idioms import IDIOMS
from _ported import PORTED

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.rules import RULES

HEADER = "import os\nimport torch\nimport torch.nn.functional as F\n"
NAMES = {"v": "x", "i": "rank"}


def _compiles(source: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<context>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _split_sample(sample: str) -> tuple[list[str], str]:
    """A rule's sample as (its imports, the rest): the imports go to the file's top, the rest is placed."""
    module = cst.parse_module(sample)
    imports, rest = [], []
    for statement in module.body:
        is_import = isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        )
        (imports if is_import else rest).append(module.code_for_node(statement).strip("\n"))
    return imports, "\n".join(rest)


def _samples() -> tuple[list[str], list[str]]:
    """(the imports the rules' samples need, the samples less their imports)."""
    imports, found = [], []
    for rule in RULES:
        if rule.sample and _compiles(rule.sample.encode()):  # (not TP024's `async=`: no Python 3 block holds it)
            needed, rest = _split_sample(rule.sample)
            imports += needed
            if rest.strip():
                found.append(textwrap.dedent(rest))
    return list(dict.fromkeys(imports)), list(dict.fromkeys(found))


def _statements(sources: list[str]) -> list[str]:
    return [t for t in dict.fromkeys(sources) if cst.parse_module(t).body]  # (a comment alone is no block's body)


IMPORTS, SAMPLES = _samples()
SAMPLES = _statements(SAMPLES)
IDIOM_TRIGGERS = _statements([idiom.format(**NAMES) for idiom in IDIOMS])


def _simple_line(trigger: str) -> bool:
    """Whether `trigger` is one line of simple statements (what a one-line suite can hold)."""
    try:
        module = cst.parse_module(trigger)
    except cst.ParserSyntaxError:
        return False
    return len(module.body) == 1 and isinstance(module.body[0], cst.SimpleStatementLine) and "\n" not in trigger.strip()


def _expression(trigger: str) -> str | None:
    """The expression a one-statement trigger computes (`y = E` or `E` alone), else None."""
    if not _simple_line(trigger):
        return None
    line = cst.parse_module(trigger).body[0]
    if len(line.body) != 1:
        return None
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        value = small.value
    elif isinstance(small, cst.Expr):
        value = small.value
    else:
        return None
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        return None  # (a docstring-like string is nobody's trigger in an expression)
    return cst.Module([]).code_for_node(value)


def _in(block: str) -> str:
    return textwrap.indent(block, "    ")


# A block context: where a block of statements (a trigger) can stand.
BLOCKS = {
    "module": lambda s: s,
    "function": lambda s: f"def f(x, model, rank, device, args):\n{_in(s)}\n",
    "async function": lambda s: f"async def f(x, model, rank, device):\n{_in(s)}\n",
    "class body": lambda s: f"class C:\n{_in(s)}\n",
    "method": lambda s: f"class C:\n    def m(self, x, model, rank):\n{_in(_in(s))}\n",
    "decorated function": lambda s: f"@staticmethod\ndef f(x, rank):\n{_in(s)}\n",
    "if body": lambda s: f"if x:\n{_in(s)}\n",
    "elif body": lambda s: f"if x:\n    pass\nelif rank:\n{_in(s)}\n",
    "if elif else chain": lambda s: f"if x:\n{_in(s)}\nelif rank == 1:\n{_in(s)}\nelif rank == 2:\n{_in(s)}\nelse:\n{_in(s)}\n",
    "else body": lambda s: f"if x:\n    pass\nelse:\n{_in(s)}\n",
    "try except else finally": lambda s: (
        f"try:\n{_in(s)}\nexcept (RuntimeError, ValueError) as e:\n{_in(s)}\nelse:\n{_in(s)}\nfinally:\n{_in(s)}\n"
    ),
    "try except star": lambda s: f"try:\n{_in(s)}\nexcept* RuntimeError:\n{_in(s)}\n",
    "for else": lambda s: f"for step in range(2):\n{_in(s)}\nelse:\n{_in(s)}\n",
    "while else": lambda s: f"while rank:\n{_in(s)}\nelse:\n{_in(s)}\n",
    "with": lambda s: f"with open('f') as fh, torch.no_grad():\n{_in(s)}\n",
    "async with and for": lambda s: (
        f"async def f(x, model, rank, lock, stream):\n    async with lock:\n{_in(_in(s))}\n"
        f"    async for item in stream:\n{_in(_in(s))}\n"
    ),
    "match": lambda s: f"match rank:\n    case 0:\n{_in(_in(s))}\n    case [a, *rest] if a:\n{_in(_in(s))}\n    case _:\n{_in(_in(s))}\n",
    "main guard": lambda s: f'if __name__ == "__main__":\n{_in(s)}\n',
    "nested": lambda s: f"def f(loader, x, rank):\n    for batch in loader:\n        if batch:\n{_in(_in(_in(s)))}\n",
    "after a statement": lambda s: f"x = 1\n{s}\nx = 2\n",
}

# A one-line suite: where a single line of simple statements can stand.
SUITES = {
    "if suite": lambda s: f"if x: {s}\n",
    "if elif else suites": lambda s: f"if x: pass\nelif rank: {s}\nelse: {s}\n",
    "for suite": lambda s: f"for step in range(2): {s}\n",
    "while suite": lambda s: f"while rank: {s}\n",
    "with suite": lambda s: f"with torch.no_grad(): {s}\n",
    "def suite": lambda s: f"def f(x, model, rank, device): {s}\n",
    "class suite": lambda s: f"class C: {s}\n",
    "try suites": lambda s: f"try: {s}\nexcept Exception: {s}\nfinally: {s}\n",
    "match suite": lambda s: f"match rank:\n    case 0: {s}\n    case _: {s}\n",
    "after a semicolon": lambda s: f"x = 1; {s}\n",
    "suite in a function": lambda s: f"def f(x, model, rank, device):\n    if x: {s}\n    return x\n",
}

# An expression context: where an expression (a trigger's value) can stand.
EXPRESSIONS = {
    "list comprehension": lambda e: f"ys = [{e} for _ in range(2)]\n",
    "comprehension condition": lambda e: f"ys = [1 for _ in range(2) if ({e})]\n",
    "dict and set comprehensions": lambda e: f"d = {{k: {e} for k in 'ab'}}\ns = {{{e} for _ in 'ab'}}\n",
    "generator": lambda e: f"g = list({e} for _ in range(2))\n",
    "lambda": lambda e: f"f = lambda x=x: {e}\n",
    "walrus": lambda e: f"if (y := {e}) is not None:\n    pass\n",
    "decorator argument": lambda e: f"@functools.wraps({e})\ndef f():\n    pass\n",
    "default argument": lambda e: f"def f(a={e}):\n    return a\n",
    "f-string": lambda e: f'message = f"""value {{({e})}}"""\n',
    "conditional expression": lambda e: f"y = ({e}) if rank else None\n",
    "return and yield": lambda e: f"def f(x, rank):\n    yield {e}\n    return {e}\n",
    "assert": lambda e: f"assert {e} is not None, 'why'\n",
    "call arguments": lambda e: f"print({e}, sep={e})\n",
    "annotated and augmented": lambda e: f"y: object = {e}\ncount += ({e}) is None\n",
    "with item": lambda e: f"with contextlib.nullcontext({e}) as y:\n    pass\n",
    "for iterable": lambda e: f"for y in [{e}]:\n    pass\n",
    "subscript and starred": lambda e: f"table[{e}] = [*[{e}]]\n",
    "await": lambda e: f"async def f(x, rank):\n    return await g({e})\n",
    "global lambda default": lambda e: f"def f():\n    global y\n    y = (lambda d={e}: d)()\n",
}


def _contexts(triggers: list[str]) -> list[tuple[str, object, list[str]]]:
    """(name, context, the triggers it can hold) for every context."""
    simple = [t for t in triggers if _simple_line(t)]
    expressions = list(dict.fromkeys(e for e in map(_expression, triggers) if e is not None))
    return (
        [(name, place, triggers) for name, place in BLOCKS.items()]
        + [(name, place, simple) for name, place in SUITES.items()]
        + [(name, place, expressions) for name, place in EXPRESSIONS.items()]
    )


def _cases() -> list:
    """Every (kind of trigger, context, target). make test takes the rules' own samples in every
    context, each context on one target in turn (every target several times); make fidelity takes
    the rest: the samples on the other targets, and the fuzz test's idioms, three times as many,
    everywhere (about two CPU-minutes)."""
    cases = []
    for kind, found in (("samples", SAMPLES), ("idioms", IDIOM_TRIGGERS)):
        for index, (name, place, held) in enumerate(_contexts(found)):
            for target in PORTED:
                quick = kind == "samples" and target == PORTED[index % len(PORTED)]
                marks = () if quick else (pytest.mark.fidelity,)
                cases.append(pytest.param(name, place, held, target, id=f"{kind}-{name}-{target}", marks=marks))
    return cases


CASES = _cases()


def _file(place, triggers: list[str]) -> bytes:
    header = HEADER + "import contextlib\nimport functools\n" + "\n".join(IMPORTS) + "\n"
    return (header + "\n".join(place(t) for t in triggers)).encode()


def _problem(source: bytes, target: str) -> str | None:
    """What is wrong with migrating `source` to `target`, or None."""
    try:
        result = migrate_source(source, targets.get(target), "context.py")
        if result.error is not None:
            return result.error
        if not _compiles(result.source):
            return "the output does not compile"
        again = migrate_source(result.source, targets.get(target), "context.py")
    except Exception as error:  # noqa: BLE001 (what `migrate` would report as an internal error)
        return f"internal error ({type(error).__name__}: {error})"
    if again.error is not None:
        return f"the second migration: {again.error}"
    if again.source != result.source:
        return "a second migration changed the file"
    return None


def test_every_context_holds_triggers() -> None:
    """The generated cases are not empty: each context holds several triggers of each kind, the
    rules' samples and the idioms real scripts trip on among them."""
    counts = {case.id: len(case.values[2]) for case in CASES}
    assert min(counts.values()) >= 5, counts
    assert "torch.cuda.synchronize()" in _contexts(SAMPLES)[0][2]
    quick = {case.values[3] for case in CASES if not case.marks}
    assert quick == set(PORTED), "make test meets every target"
    assert "torch.cuda.nvtx.range_push('forward')" in dict((n, t) for n, _, t in _contexts(IDIOM_TRIGGERS))["if suite"]


@pytest.mark.parametrize(("name", "place", "triggers", "target"), CASES)
def test_triggers_in_context_migrate_cleanly(name: str, place, triggers: list[str], target: str) -> None:
    source = _file(place, triggers)
    assert _compiles(source), f"the case itself is not valid Python ({name})"
    if _problem(source, target) is None:
        return
    culprits = []
    for trigger in triggers:
        alone = _file(place, [trigger])
        problem = _problem(alone, target)
        if problem is not None:
            culprits.append(f"{problem}\n{alone.decode()[len(_file(place, []).decode()):]}")
    assert culprits, "the whole file fails, though each trigger alone migrates cleanly"
    pytest.fail(f"{len(culprits)} trigger(s) in {name} on {target}:\n\n" + "\n---\n".join(culprits[:6]))


@pytest.mark.parametrize("target", PORTED)
def test_what_a_removed_statement_needed_is_not_written(target: str) -> None:
    """A fix inside a statement that another fix removes whole came to nothing: what it needed
    (a helper definition, an import) is not written either."""
    for body in ("y.record_stream(torch.cuda.current_stream())\n",
                 "def keep(y):\n    y.record_stream(torch.cuda.current_stream())\n    return y\n"):
        source = ("import torch\n" + body).encode()
        result = migrate_source(source, targets.get(target), "stream.py")
        defined = {name for name in targets.get(target).definitions if f"{name} = " in result.source.decode()
                   or f"class {name}" in result.source.decode() or f"def {name}(" in result.source.decode()}
        used = {name for name in defined if result.source.decode().count(name) > 1}
        assert defined == used, result.source.decode()
