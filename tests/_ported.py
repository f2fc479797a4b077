"""The targets CUDA code is ported to: every target but CUDA itself (cuda, where CUDA code runs as
written and migrate leaves it alone). Tests of how the rewriter moves code run on these."""

from torchport import targets

PORTED = [name for name in targets.names() if not targets.get(name).runs_cuda_code]
