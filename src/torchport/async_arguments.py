"""`async=` keyword arguments, PyTorch's spelling of `non_blocking=` before 0.4 (`x.cuda(async=True)`),
renamed on the tokens of a source that Python 3.7+ cannot compile because of them: migrate's TP024
writes the result into the file, run compiles it in memory (runtime/pre37.py). Here, at the bottom
of the package, beside syntax.py, so that run reads it without migrate's rules (or LibCST).

Each `async` token that is a keyword argument of a call (inside the call's parentheses, followed by
`=`, not in a lambda's parameters) becomes `non_blocking`; strings, comments, `async def` and
`await` are left alone, and so is a parameter named `async`.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

OLD, NEW = "async", "non_blocking"
MENTIONS = re.compile(rb"\basync\s*=(?!=)")
_NOT_CODE = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
_OPENING = {"(": ")", "[": "]", "{": "}"}


def rename_async_arguments(source: bytes) -> tuple[bytes, list[int]]:
    """`source` with its `async=` keyword arguments renamed `non_blocking=`, and the lines renamed
    (none: `source` itself)."""
    if not MENTIONS.search(source):
        return source, []
    lines = io.BytesIO(source).readlines()  # (the lines tokenize reads: split at b"\n" only)
    places = list(_keyword_arguments(lines))
    if not places:
        return source, []
    encoding, _ = tokenize.detect_encoding(iter(lines).__next__)  # (tokenize says utf-8 for utf-8-sig)
    for place in reversed(places):  # (right to left: earlier offsets on a line stay valid)
        line = lines[place.row - 1]
        at = _byte_offset(line, place.column, encoding)
        lines[place.row - 1] = line[:at] + NEW.encode() + line[at + len(OLD) :]
    return b"".join(lines), sorted({place.row for place in places})


@dataclass(frozen=True)
class _Place:
    row: int
    column: int  # in characters of the decoded line (a BOM dropped), as tokenize counts


@dataclass
class _Bracket:
    call: bool  # the parentheses of a call (not a definition's parameters, a tuple, a list, ...)
    lambdas: int = 0  # lambdas opened at this level whose `:` has not come yet


def _keyword_arguments(lines: list[bytes]) -> Iterator[_Place]:
    """Where `async` is a keyword argument of a call. Tokens are read one at a time (a large
    file's token list would cost more than the file); a file tokenize cannot read has none."""
    remaining = iter(lines)
    brackets: list[_Bracket] = []
    before: list[tokenize.TokenInfo] = []  # the last two code tokens
    candidate = None
    try:
        for token in tokenize.tokenize(lambda: next(remaining, b"")):
            if token.type in _NOT_CODE:
                continue
            if candidate is not None and token.type == tokenize.OP and token.string == "=":
                yield _Place(*candidate.start)
            candidate = _async_argument(token, before, brackets)
            _track(token, before, brackets)
            before = [*before[-1:], token]
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        return


def _async_argument(token: tokenize.TokenInfo, before: list[tokenize.TokenInfo], brackets: list[_Bracket]):
    """`token` if it is an `async` where a keyword argument of a call starts (else None)."""
    if token.type != tokenize.NAME or token.string != OLD or not brackets:
        return None
    inner = brackets[-1]
    previous = before[-1] if before else None
    starts_argument = previous is not None and previous.type == tokenize.OP and previous.string in ("(", ",")
    return token if inner.call and not inner.lambdas and starts_argument else None


def _track(token: tokenize.TokenInfo, before: list[tokenize.TokenInfo], brackets: list[_Bracket]) -> None:
    """Follow the brackets (and which are calls) and the lambdas in them."""
    if token.type == tokenize.NAME and token.string == "lambda" and brackets:
        brackets[-1].lambdas += 1
    if token.type != tokenize.OP:
        return
    if token.string in _OPENING:
        brackets.append(_Bracket(call=token.string == "(" and _is_callee(before)))
    elif token.string in _OPENING.values() and brackets:
        brackets.pop()
    elif token.string == ":" and brackets and brackets[-1].lambdas:
        brackets[-1].lambdas -= 1


def _is_callee(before: list[tokenize.TokenInfo]) -> bool:
    """Whether the code before a `(` is something called: a name (not a keyword, not the name of
    a `def`), or the end of a call or subscript."""
    if not before:
        return False
    last = before[-1]
    if last.type == tokenize.OP:
        return last.string in (")", "]")
    if last.type != tokenize.NAME or keyword.iskeyword(last.string):
        return False
    return not (len(before) > 1 and before[0].type == tokenize.NAME and before[0].string == "def")


def _byte_offset(line: bytes, column: int, encoding: str) -> int:
    """Where character `column` of `line` (decoded as tokenize decodes it, a BOM dropped) starts."""
    text = line.decode(encoding)
    plain = "utf-8" if encoding == "utf-8-sig" else encoding
    return len(line) - len(text[column:].encode(plain))
