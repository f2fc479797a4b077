"""The names the generated code binds and reads: one spelling, shared by every step (the setup
block binds them; the other steps' code reads them)."""

LOCAL_RANK = "LOCAL_RANK"  # this process's device on its machine (torchrun's LOCAL_RANK)
RANK = "RANK"  # this process among all (rank 0 saves and prints)
WORLD_SIZE = "WORLD_SIZE"  # how many processes train together
SAMPLER = "torch.utils.data.distributed.DistributedSampler"
DDP = "torch.nn.parallel.DistributedDataParallel"
SETUP_COMMENT = "# torchport --distributed: one process per device, started by a launcher (run_distributed.sh)"
