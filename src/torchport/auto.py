"""`import torchport.auto` at the top of a CUDA script runs it on another target, unmodified.

The target is $TORCHPORT_TARGET (default "auto": the first available of the targets `auto` may
pick, as `torchport run --help` lists them: cuda, npu, xpu, mps, else cpu);
the call-site log goes to $TORCHPORT_LOG (default torchport_run.log). Import it before anything
else, so that names copied out of torch (`from torch import zeros`) are the patched ones.
"""

import os

from torchport.runtime.autoload import TARGET_ENV, apply_from_environment

session = apply_from_environment(os.environ.get(TARGET_ENV, "").strip() or "auto")
