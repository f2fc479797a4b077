"""apex code rewritten to native torch, in CUDA's own dialect (`torch.amp.autocast("cuda")`,
`torch.amp.GradScaler("cuda")`, torch DDP, `torchport.optim`), before a file is migrated: the
migration then moves it to the target as it moves any native CUDA code. What apex means is read
from `torchport.apis.apex`; a file whose apex use cannot be rewritten with confidence imports the
stand-in package instead (`torchport.compat.apex`), whole: never half-rewritten."""
