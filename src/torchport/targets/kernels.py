"""Where a target's kernels are listed, for `torchport ops check`.

torch's kernel data (generated from native_functions.yaml, see tools/gen_kernels.py) names the
kernels of the backends torch builds itself, by dispatch key. A target says which key its kernels
are listed under, whether a package of its own registers kernels that list lacks (torch_npu,
with data of its own beside torch's), and what happens to an op it has no kernel for. A target
without `kernels` has none in any data torchport holds: only composite ops can be judged there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kernels:
    key: str  # the dispatch key of the target's kernels in torch's kernel data ("MPS", "NPU")
    # kernel data of the target's own package (a file in targets/data, made by tools/gen_kernels.py):
    # the aten overloads it registers kernels for, and its own operators
    own_data: str | None = None
    data_package: str = "torchport.targets"  # the package whose data/ folder holds own_data (a vendor's own)
    namespace: str | None = None  # where that package's own operators live (`npu::npu_fusion_attention`)
    listed_elsewhere: str = ""  # who registers the kernels torch's data does not list (intel/torch-xpu-ops)
    without_kernel: str = ""  # what happens to an op the target has no kernel for


# Where the code comes from: code for a device known only at run time needs CUDA's kernels too.
CUDA = Kernels("CUDA")
