"""A single-card CUDA training script made one that runs as N processes, one per device
(`migrate --distributed`, `run --distributed`, and what `analyze` says --distributed would change).

The steps rewrite the script in CUDA's own dialect (`torch.cuda.set_device(LOCAL_RANK)`,
`init_process_group("nccl")`, DDP): the migration that follows maps those to the target like any
other CUDA code, so what each target calls them stays in targets/ and the rules.
"""

__all__ = ["Distributed", "Options", "distribute_source"]


def __getattr__(name: str):
    # (imported on first use: the package's small modules, modes.py, are read without LibCST)
    if name in __all__:
        from torchport.distribute import driver

        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
