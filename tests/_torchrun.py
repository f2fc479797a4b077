"""Failures of a torchrun launch that do not come from the script it ran, for the tests that run
projects under torchrun: such a run is tried again, up to ATTEMPTS runs in all (a run that fails
every time fails the test); the script's own failures never are."""

# (the gloo teardown abort came twice in a row once, in a make fidelity run beside a make test)
ATTEMPTS = range(1, 4)

TRANSIENT = (
    # the launch never reached the script: a port taken between torchrun's choice and its store's
    # bind, a peer reset while the machine is loaded
    "EADDRINUSE", "address already in use", "Connection reset by peer", "Connection refused",
    "RendezvousConnectionError", "DistStoreError",
    # torch's own teardown: gloo's worker threads still held at interpreter exit abort a rank that
    # had finished its work (SIGABRT after the script's last line; pytorch/pytorch#179291)
    "terminate called without an active exception",
)


def transient(stderr: str) -> bool:
    """Whether a failed torchrun run's stderr names a failure of the launch or of torch's teardown."""
    return any(failure in stderr for failure in TRANSIENT)
