"""torchport: move PyTorch CUDA training code to other accelerators."""

__version__ = "0.1.0"
