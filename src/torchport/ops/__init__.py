"""Which aten operators a training script uses, and which of them a target has no kernel for.

Three sources give the same list (ops.json, see `opset`): a profiler table printed in a log
(`table`), a profiler chrome trace (`trace`), or a live run of the script under a dispatch mode
(`recorder`, `capture`). `kernels` reads the kernel lists generated from the real torch and
torch_npu wheels (tools/gen_kernels.py); `check` gives each op a verdict on a target.
"""
