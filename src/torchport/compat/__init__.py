"""Stand-ins for CUDA-only libraries, built on native torch, for any device (`compat.apex`)."""
