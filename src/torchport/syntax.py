"""Why a file is not valid Python, in words a person can act on: the line Python itself names, and
whether the cause is code written for Python 2 or for Python 3 before 3.7.

LibCST's own parser errors give a position that can be a line off and a grammar rule, not a reason;
Python's compiler gives the right line. So the reason is always Python's, read once the file has
failed to parse, and its line is looked at for what older Pythons accepted: `print "x"`,
`except E, e:`, backticks, `exec "..."`, `0777`, `10L`, `ur""`, `<>`, `raise E, "msg"`, tuple
parameters, and `async` used as a name (`x.cuda(async=True)`, PyTorch's spelling before 0.4).
(Here, at the bottom of the package: `migrate` lists such files, `run` refuses them.)
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

PYTHON2 = "Python 2 syntax"
BEFORE_37 = "pre-3.7 syntax"

# What Python's own message says, for the constructs it recognises.
_BY_MESSAGE = (
    ("Missing parentheses in call to 'print'", PYTHON2, "a print statement"),
    ("Missing parentheses in call to 'exec'", PYTHON2, "an exec statement"),
    ("leading zeros in decimal integer literals", PYTHON2, "an octal literal such as 0777"),
    ("parameters cannot be parenthesized", PYTHON2, "tuple parameters"),
)
# What the offending line says, where Python's message is only "invalid syntax" or the like.
_BY_TEXT = (
    (re.compile(r"^\s*except\b[^:#]*,\s*[A-Za-z_]\w*\s*:"), PYTHON2, "`except E, e:`"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), PYTHON2, "`raise E, message`"),
    (re.compile(r"`"), PYTHON2, "backticks"),
    (re.compile(r"<>"), PYTHON2, "the <> operator"),
    (re.compile(r"\b[uU][rR]\"\""), PYTHON2, "a ur'' string"),
    (re.compile(r"\b\d+[lL]\b"), PYTHON2, "a long literal such as 10L"),
    (re.compile(r"\b(?:async|await)\s*(?:=(?!=)|[.,)\]:])|\.(?:async|await)\b|\b(?:def|import|from)\s+(?:async|await)\b"),
     BEFORE_37, "async or await used as a name: both are keywords since Python 3.7"),
)


@dataclass(frozen=True)
class SyntaxProblem:
    """Why Python cannot compile a source."""

    message: str  # Python's own words
    line: int | None = None
    era: str | None = None  # PYTHON2 or BEFORE_37, when the code was written for an older Python
    construct: str = ""  # what of that era was found (`a print statement`)

    def __str__(self) -> str:
        where = f" at line {self.line}" if self.line else ""
        why = f"{self.era} ({self.construct})" if self.era else self.message
        return f"not valid Python{where}: {why}"


def syntax_problem(source: bytes | str, path: str = "<file>") -> SyntaxProblem | None:
    """Why Python cannot compile `source` (None if it can). Compiling costs less than
    `ast.parse`, which builds a Python object for every node."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return _explained(error)
    except (ValueError, MemoryError, RecursionError) as error:
        return SyntaxProblem(f"{type(error).__name__}: {str(error) or type(error).__name__}")
    return None


def _explained(error: SyntaxError) -> SyntaxProblem:
    message = error.msg or type(error).__name__
    text = error.text or ""
    for words, era, construct in _BY_MESSAGE:
        if words in message:
            return SyntaxProblem(message, error.lineno, era, construct)
    for pattern, era, construct in _BY_TEXT:
        if pattern.search(_code_of(text)):
            return SyntaxProblem(message, error.lineno, era, construct)
    return SyntaxProblem(message, error.lineno)


def _code_of(line: str) -> str:
    """`line` without its string literals and comment (a backtick in a message is no Python 2)."""
    return re.sub(r"#.*", "", re.sub(r"\"[^\"]*\"|'[^']*'", '""', line))
