"""Where torch takes a device: shared by the rewriter (which literals to rewrite) and the patcher
(which callables to wrap). Target-independent; the targets say what a device becomes.
"""

from __future__ import annotations

# torch.* functions with a `device=` keyword (tensor factories and friends).
FACTORIES = frozenset(
    {
        "arange", "as_tensor", "bartlett_window", "blackman_window", "empty", "empty_like",
        "empty_strided", "eye", "from_file", "frombuffer", "full", "full_like", "hamming_window",
        "hann_window", "kaiser_window", "linspace", "logspace", "normal", "ones", "ones_like",
        "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "range",
        "scalar_tensor", "sparse_coo_tensor", "sparse_csr_tensor", "tensor", "tril_indices",
        "triu_indices", "zeros", "zeros_like",
    }
)

# Tensor methods with a `device=` keyword.
TENSOR_FACTORY_METHODS = frozenset(
    {"new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros"}
)

# Methods whose first positional argument may be a device (`x.to("cuda:0")`, `m.to(0)`).
TO_METHODS = frozenset({"to", "to_empty"})

# Keyword arguments that hold a device, whatever the callee.
DEVICE_KEYWORDS = frozenset({"device", "map_location", "output_device", "device_id"})

# Keyword arguments that hold a list of devices.
DEVICE_LIST_KEYWORDS = frozenset({"device_ids"})

# Names of the CUDA spelling in the distributed and environment worlds.
CUDA_DIST_BACKEND = "nccl"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
