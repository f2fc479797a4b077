"""Streams and events: `tensor.record_stream(s)`.

`record_stream` tells CUDA's caching allocator that a stream still uses a tensor; a tensor on the
host has no stream allocator and rejects the call. Timing events are the target's
(`Target.host_timing`: read from the host clock where the target has none).
"""

from __future__ import annotations

from torchport.apis.devices import Presence, device_presence

RECORD_STREAM = "record_stream"
NO_STREAM_ALLOCATOR = "CPU tensors have no stream allocator"  # why a host tensor's call goes


def record_stream(target) -> Presence:
    """Whether `x.record_stream(s)` has a stream allocator to tell on `target`: dropped on the
    CPU, run only when an accelerator is present on the device-agnostic target."""
    return device_presence(target)
