"""Dynamic-shape detection overhead: a training step with no detector, under torchport's DETECTOR,
and under a per-call `traceback.extract_stack()` hook (the way Ascend's detector keys a call site),
on the same model and the same variable-length batches, in one process, interleaved.

The model is a small transformer written in the script (F.linear, softmax, layer_norm, ...), so
that both detectors see the same user calls; AdamW's own calls are left out by both. The
traceback variant is torchport's detector with one change: each recorded call is keyed by
`f"{traceback.extract_stack()}_{name}"`, as msft_dynamic_analysis/hook.py does, instead of by the
call's code object and instruction. Blocks of steps rotate among the three, a block of each per
round; a side's step time is its median block over the rounds, and its overhead that minus the
plain step's.

    python bench/shapes.py [--rounds 30] [--steps 8] [--warmup 10]

Goals: the detector's step at most 2x the plain one; its overhead (step minus plain step) at
least 5x smaller than the traceback hook's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

from torchport.shapes.capture import Recorder
from torchport.shapes.detector import ShapeDetector

CLOCK = time.perf_counter


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.qkv = nn.Parameter(torch.randn(3 * width, width) / width ** 0.5)
        self.out = nn.Parameter(torch.randn(width, width) / width ** 0.5)
        self.up = nn.Parameter(torch.randn(4 * width, width) / width ** 0.5)
        self.down = nn.Parameter(torch.randn(width, 4 * width) / (4 * width) ** 0.5)
        self.width = width

    def forward(self, x):
        h = F.layer_norm(x, (self.width,))
        q, k, v = F.linear(h, self.qkv).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(1, 2) / self.width ** 0.5, dim=-1)
        x = x + F.linear(attention @ v, self.out)
        h = F.layer_norm(x, (self.width,))
        return x + F.linear(F.gelu(F.linear(h, self.up)), self.down)


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int = 512, width: int = 64, depth: int = 2, classes: int = 4) -> None:
        super().__init__()
        self.embedding = nn.Parameter(torch.randn(vocab, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Parameter(torch.randn(classes, width) * 0.02)

    def forward(self, tokens):
        x = F.embedding(tokens, self.embedding)
        for block in self.blocks:
            x = block(x)
        return F.linear(x.mean(dim=1), self.head)


def train_step(model, optimizer, tokens, labels):
    loss = F.cross_entropy(model(tokens), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


class TracebackRecorder(Recorder):
    """Keys each call by its whole stack, formatted, as Ascend's hook does on every call."""

    def site_key(self, frame, name, what):
        return f"{traceback.extract_stack()}_{name}"


class TracebackDetector(ShapeDetector):
    recorder_class = TracebackRecorder


def timed_block(model, optimizer, batches, wrap) -> float:
    """Seconds per step over `batches`, iterated through `wrap` (None: as they are)."""
    start = CLOCK()
    for tokens, labels in (batches if wrap is None else wrap.start(batches)):
        train_step(model, optimizer, tokens, labels)
    return (CLOCK() - start) / len(batches)


class CountingRecorder(Recorder):
    calls = 0

    def note(self, frame, name, what, inputs, outputs):
        CountingRecorder.calls += 1
        super().note(frame, name, what, inputs, outputs)


class CountingDetector(ShapeDetector):
    recorder_class = CountingRecorder


def calls_per_step(model, optimizer, batches) -> float:
    """How many calls a step records (the batch's own site aside): what the overhead is spread over."""
    detector = CountingDetector(save_at_exit=False)
    for tokens, labels in detector.start(batches):
        train_step(model, optimizer, tokens, labels)
    return CountingRecorder.calls / len(batches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds (one block per side each)")
    parser.add_argument("--steps", type=int, default=8, help="steps per block")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per side first")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: a busy machine stalls multi-threaded steps)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    global CLOCK
    if args.threads == 1:  # all the work is on this thread: count its CPU time
        CLOCK = time.thread_time

    torch.manual_seed(0)
    model = TinyTransformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lengths = [24, 40, 32, 48, 56, 28, 64, 36]
    batches = [(torch.randint(0, 512, (8, lengths[i % len(lengths)])), torch.randint(0, 4, (8,)))
               for i in range(args.steps)]
    sides = {"plain": None, "detector": ShapeDetector(save_at_exit=False),
             "traceback": TracebackDetector(save_at_exit=False)}
    for wrap in sides.values():
        for _ in range(max(1, args.warmup // args.steps)):
            timed_block(model, optimizer, batches, wrap)

    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(args.rounds):
        order = list(sides)[round_ % 3:] + list(sides)[:round_ % 3]  # no side always first
        for name in order:
            times[name].append(timed_block(model, optimizer, batches, sides[name]))

    step = {name: statistics.median(values) * 1000 for name, values in times.items()}  # ms
    ratio = step["detector"] / step["plain"]
    overhead = {name: step[name] - step["plain"] for name in ("detector", "traceback")}
    calls = calls_per_step(model, optimizer, batches)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), clock {CLOCK.__name__}, "
          f"{args.rounds} rounds x {args.steps} steps per side, {calls:.0f} recorded calls per step")
    print(f"plain step           {step['plain']:8.3f} ms")
    print(f"DETECTOR step        {step['detector']:8.3f} ms   overhead {overhead['detector']:7.3f} ms/step "
          f"({overhead['detector'] * 1000 / calls:.1f} us/call)   ratio to plain {ratio:.3f} (goal <= 2)")
    print(f"traceback-hook step  {step['traceback']:8.3f} ms   overhead {overhead['traceback']:7.3f} ms/step "
          f"({overhead['traceback'] * 1000 / calls:.1f} us/call)")
    advantage = overhead["traceback"] / overhead["detector"] if overhead["detector"] > 0 else float("inf")
    print(f"traceback-hook overhead / DETECTOR overhead: {advantage:.1f}x (goal >= 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
