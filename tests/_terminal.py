"""For tests that interrupt a child process as a terminal would."""

import signal


def default_sigint() -> None:
    """(In the child, as Popen's preexec_fn.) A shell's background job, `make test &` or a CI
    runner's, inherits SIGINT ignored, and python then never raises KeyboardInterrupt: give the
    child the default disposition, as a terminal's Ctrl-C finds it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
