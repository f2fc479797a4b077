"""Benchmark-script style (Megatron timers, per-layer profiling in model-zoo repos): CUDA events
bound in tuples, kept in lists, in a dict and on `self`, timed with elapsed_time, and the batch
size chosen from `torch.cuda.mem_get_info()`.

It cannot run unmodified on a CPU-only machine.
"""
import argparse
import math

import torch
import torch.nn as nn


class CudaTimer:
    def __init__(self, name):
        self.name = name
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.elapsed_ms = 0.0

    def __enter__(self):
        self.start.record()
        return self

    def __exit__(self, *exc):
        self.end.record()
        self.end.synchronize()
        self.elapsed_ms += self.start.elapsed_time(self.end)


def pick_batch_size(bytes_per_sample, largest):
    free, total = torch.cuda.mem_get_info()
    assert 0 <= free <= total, (free, total)
    return max(1, min(largest, int(free * 0.5) // bytes_per_sample))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=3)
    parser.add_argument('--max-batch', type=int, default=8)
    args = parser.parse_args()

    torch.manual_seed(0)
    layers = nn.ModuleList([nn.Linear(16, 16) for _ in range(3)]).cuda()
    optimizer = torch.optim.SGD(layers.parameters(), lr=0.01)
    batch = pick_batch_size(16 * 4 * 3, args.max_batch)

    start_events = [torch.cuda.Event(enable_timing=True) for _ in layers]
    end_events = [torch.cuda.Event(enable_timing=True) for _ in layers]
    phases = {name: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for name in ("forward", "backward")}
    timer = CudaTimer("step")

    step_start, step_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    step_start.record()
    for _ in range(args.steps):
        x = torch.randn(batch, 16).cuda()
        with timer:
            phases["forward"][0].record()
            for i, layer in enumerate(layers):
                start_events[i].record()
                x = torch.relu(layer(x))
                end_events[i].record()
            phases["forward"][1].record()
            loss = x.pow(2).mean()
            optimizer.zero_grad()
            phases["backward"][0].record()
            loss.backward()
            phases["backward"][1].record()
            optimizer.step()
    step_end.record()
    torch.cuda.synchronize()

    layer_ms = [s.elapsed_time(e) for s, e in zip(start_events, end_events)]
    phase_ms = {name: begin.elapsed_time(finish) for name, (begin, finish) in phases.items()}
    total_ms = step_start.elapsed_time(step_end)
    assert all(ms >= 0 for ms in layer_ms) and all(ms >= 0 for ms in phase_ms.values())
    assert 0 <= timer.elapsed_ms <= total_ms + 1.0, (timer.elapsed_ms, total_ms)
    assert math.isfinite(loss.item())
    print(f'FINAL project=event_timing steps={args.steps} batch={batch} layers={len(layer_ms)} '
          f'phases={sorted(phase_ms)} loss={loss.item():.4f}')


if __name__ == '__main__':
    main()
