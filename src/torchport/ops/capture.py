"""Run a training script under the op recorder, in this process, as `python script.py args` would.

--steps N ends the run after N optimizer steps: a torch.optim optimizer's `step()` returning for
the Nth time (counted per optimizer, so a GAN's two optimizers end it after N iterations; through
torch.optim's global step hook, which GradScaler.step reaches too). The script is then stopped by
an exception it does not catch (not an Exception subclass), so its `finally` blocks and `with`
exits run, and the ops recorded are written. Without --steps the script runs to its end.
A script that raises, exits with a non-zero status or is interrupted (Ctrl-C) still has what was
recorded written.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from torchport.ops.kernels import KernelData
from torchport.ops.opset import OpSet


INTERRUPTED = "interrupted"


class EnoughSteps(BaseException):
    """Raised from the optimizer hook after the last recorded step: ends the script."""


@dataclass
class Outcome:
    ops: OpSet
    source: dict
    failure: str | None = None  # one line: how the script failed
    steps: int = 0
    devices: set[str] = field(default_factory=set)
    interrupted: bool = False  # Ctrl-C: what ran before is kept all the same


def capture(script: Path, argv: list[str], steps: int | None, data: KernelData) -> Outcome:
    from torch.optim.optimizer import register_optimizer_step_post_hook

    from torchport.ops.recorder import OpRecorder

    recorder = OpRecorder()
    counted: Counter[int] = Counter()

    def after_step(optimizer, args, kwargs) -> None:
        counted[id(optimizer)] += 1
        if steps is not None and counted[id(optimizer)] >= steps and recorder.recording:
            recorder.recording = False
            raise EnoughSteps

    hook = register_optimizer_step_post_hook(after_step)
    try:
        failure, ended = _run(script, argv, recorder)
    finally:
        hook.remove()
    made = max(counted.values(), default=0)
    source = _source(script, argv, recorder.devices, made, ended)
    outcome = Outcome(to_opset(recorder.calls, data), source, failure, made, recorder.devices)
    outcome.interrupted = ended == INTERRUPTED
    return outcome


def _source(script: Path, argv: list[str], devices: set[str], steps: int, ended: str) -> dict:
    import torch

    return {
        "kind": "capture",
        "script": str(script),
        "args": argv,
        "torch": torch.__version__,
        "devices": sorted(devices),
        "optimizer_steps": steps,
        "ended": ended,
    }


def _run(script: Path, argv: list[str], recorder) -> tuple[str | None, str]:
    """(a one-line failure or None, how the script ended)."""
    saved = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        with recorder:
            runpy.run_path(str(script), run_name="__main__")
    except EnoughSteps:
        return None, "stopped after --steps optimizer steps"
    except KeyboardInterrupt:
        return None, INTERRUPTED
    except SystemExit as exit_:
        code = exit_.code
        if code in (None, 0):
            return None, "exited"
        if not isinstance(code, int):  # sys.exit("message") prints it and exits with status 1
            return f"{script} exited: {code}", "exited with status 1"
        return f"{script} exited with status {code}", f"exited with status {code}"
    except Exception as error:  # the script's own failure: reported in one line, ops kept
        return f"{_where(script, error)} raised {type(error).__name__}: {_first_line(error)}", "raised"
    finally:
        sys.argv, sys.path[:] = saved[0], saved[1]
    return None, "ended"


def _where(script: Path, error: BaseException) -> str:
    """'train.py:12', the script's last line on the way to the error (or just the script)."""
    target = os.path.realpath(script)
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if os.path.realpath(f.filename) == target]
    return f"{script}:{lines[-1]}" if lines else str(script)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


def to_opset(calls: Counter, data: KernelData) -> OpSet:
    """The recorder's calls as ops; ops no backend runs (CompositeImplicitAutograd) left out."""
    ops = OpSet()
    for call, count in calls.items():
        if data.is_implicit(call.name, overload=call.overload):
            continue
        ops.add(
            call.name,
            count,
            caller=call.caller,
            overload=call.overload,
            shapes=_lists(call.shapes),
            dtypes=list(call.dtypes),
        )
    return ops


def _lists(value):
    """Tuples (hashable, while recording) back to the lists JSON writes."""
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    return value
