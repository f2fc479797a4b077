"""List the targets, or the verdict on every torch.cuda API for one target.

  torchport targets                       one line per target (those of other packages say which)
  torchport targets --target npu          every torch.cuda API and what it becomes on the NPU
  torchport targets --target cpu --kind unsupported
"""

from __future__ import annotations

import argparse

from torchport import targets
from torchport.targets.surface import cuda_apis
from torchport.targets.verdict import Kind


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", choices=targets.names(), help="show the verdicts for this target")
    parser.add_argument("--kind", choices=[k.value for k in Kind], help="only verdicts of this kind")


def main(args: argparse.Namespace) -> int:
    apis = cuda_apis()
    if args.target is None:
        for target in targets.all_targets().values():
            counts = ", ".join(f"{n} {kind}" for kind, n in target.counts(apis).items())
            origin = targets.origin(target.name)
            summary = f"{target.summary} (from {origin})" if origin else target.summary
            print(f"{target.name:<12} {summary}\n{'':<12} {len(apis)} torch.cuda APIs: {counts}")
        return 0
    target = targets.get(args.target)
    for verdict in target.verdicts(apis).values():
        if args.kind is None or verdict.kind.value == args.kind:
            print(verdict.describe())
    return 0
