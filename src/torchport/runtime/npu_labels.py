"""Under run, for NPU code: torch's losses that read class indices accept the int32 labels Ascend's
did (`criterion(out, target.to(torch.int32))`, apis/losses.py), as int64: the cast that
`migrate --from npu` writes, done at the call."""

from __future__ import annotations

import functools
import sys

from torchport.apis import losses
from torchport.targets.verdict import Kind, Verdict


def install(session) -> None:
    import torch
    import torch.nn.functional as functional

    for qualified in losses.LONG_TARGET_FUNCTIONS:
        name = qualified.rpartition(".")[2]
        verdict = Verdict(f"{qualified} (int32 target)", Kind.ADAPTED, "target.long()",
                          "torch reads class indices as int64; the NPU's kernels took int32")
        session.book.replace(functional, name, _accepting(getattr(functional, name), verdict, session, torch))


def _accepting(original, verdict, session, torch):
    note = session.log.note_frame

    @functools.wraps(original)
    def loss(input, target, *args, **kwargs):
        if isinstance(target, torch.Tensor) and target.dtype == torch.int32:
            note(verdict, sys._getframe(1))
            target = target.long()
        return original(input, target, *args, **kwargs)

    return loss
