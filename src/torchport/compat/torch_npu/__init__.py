"""A stand-in for torch_npu where none is installed (`torchport run` serves it as `torch_npu`):
every call goes to the run's target, and the fused kernels (`torch_npu.npu_*`) compute their
reference torch code (ops.py, which apis/npu_ops.py describes)."""
