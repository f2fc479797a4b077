"""A timing event read from the host clock: the run-time form of the verdict
`torch.cuda.Event -> time.perf_counter [adapted]` on targets without usable device events.

`record()` waits for the device first (when there is one), so the interval still covers the
device work queued before it, as a CUDA event's would.
"""

from __future__ import annotations

import time


class HostEvent:
    """Stands in for `torch.cuda.Event`: record(), elapsed_time() in milliseconds, synchronize()."""

    synchronize_device = None  # set by the runtime: the target's synchronize, or None on the CPU

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream=None) -> None:
        if self.synchronize_device is not None:
            self.synchronize_device()
        self._time = time.perf_counter()

    def elapsed_time(self, end_event: "HostEvent") -> float:
        if self._time is None or end_event._time is None:
            raise RuntimeError("both events must be recorded before elapsed_time()")
        return (end_event._time - self._time) * 1000.0

    def synchronize(self) -> None:
        if self.synchronize_device is not None:
            self.synchronize_device()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<torchport HostEvent recorded={self._time is not None}>"
