"""Errors every layer may raise, kept at the bottom so that no lower layer imports the CLI."""


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


INTERNAL_ERROR = "internal error"  # how a bug of torchport's is named in a row or a skipped file's reason


def internal_error(error: BaseException) -> str:
    """`internal error (TypeError: its first line)`: what a bug of ours, caught so that it costs one
    file (or one step of one file) and not the run, is called wherever it is reported; the summary
    counts these and `migrate` then exits 1."""
    first = (str(error).strip().splitlines() or [""])[0]
    return f"{INTERNAL_ERROR} ({type(error).__name__}: {first})"


def is_internal_error(reason: str) -> bool:
    return INTERNAL_ERROR in reason
