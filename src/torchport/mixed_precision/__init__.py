"""`migrate --amp`: mixed precision added to training steps that run in float32 (the NPU's matrix
units compute in float16; Ascend's migration guide makes AMP a required step there)."""
