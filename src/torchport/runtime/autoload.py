"""The `torch.backends` entry point: `TORCHPORT_TARGET=cpu python train.py` with no code change.

torch calls every entry point of the group `torch.backends` at the end of `import torch` (the way
torch_npu loads itself). Without TORCHPORT_TARGET this returns at once, so installing torchport
costs other programs nothing. TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns all such entry points off.
"""

from __future__ import annotations

import os

TARGET_ENV = "TORCHPORT_TARGET"
LOG_ENV = "TORCHPORT_LOG"
DEFAULT_LOG = "torchport_run.log"
# The log of the processes of a torchrun that `run --distributed --nproc-per-node` started, passed
# in the environment (torchrun's parser would take their --log for an abbreviation of its --log-dir).
RANKS_LOG_ENV = "TORCHPORT_RUN_LOG"


def activate() -> None:
    name = os.environ.get(TARGET_ENV, "").strip()
    if not name:
        return
    apply_from_environment(name)


def apply_from_environment(name: str):
    """Apply the target named by the environment; a bad value is a one-line error and exit 2."""
    import sys

    from torchport import runtime

    if name in ("auto", "accelerator"):
        _load_other_backends()  # so torch.accelerator already sees e.g. torch_npu's device
    from torchport.runtime.amp_training import install_from_environment

    log = os.environ.get(LOG_ENV, DEFAULT_LOG) or None
    try:
        session = runtime.apply(name, log=log)
    except runtime.TargetError as error:
        print(f"torchport: error: {TARGET_ENV}={name}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    install_from_environment(session)  # (TORCHPORT_AMP=torch: run --amp's processes)
    return session


def _load_other_backends() -> None:
    """Run the other `torch.backends` entry points now (torch runs them in no set order; they are
    written to be loaded more than once)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="torch.backends"):
        if not entry.value.startswith("torchport."):
            entry.load()()
