"""Does the moved code compute the same? `torchport dump` records a run's numbers (per module
call: forward outputs and the gradients that reach them, as statistics and a fixed sample; the
loss and every parameter's gradient norm per step; the run's settings), and `torchport compare`
lines two dumps up call by call and names the first call that parts beyond what its precision
allows."""
