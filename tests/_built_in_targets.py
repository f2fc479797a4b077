"""The targets torchport ships, and the others the registry discovers.

Tests name the built-in targets with their exact, hand-written expectations; any other target (a
module added under src/torchport/targets/, or one an installed package declares) is tested with
what its own data lets one say.
"""

from __future__ import annotations

from torchport import targets

BUILT_IN = ("cuda", "npu", "xpu", "mps", "cpu", "accelerator")


def added() -> list[str]:
    """The discovered targets torchport does not ship, in the registry's order."""
    return [name for name in targets.names() if name not in BUILT_IN]
