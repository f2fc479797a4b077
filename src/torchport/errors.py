"""Errors every layer may raise, kept at the bottom so that no lower layer imports the CLI."""


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""
