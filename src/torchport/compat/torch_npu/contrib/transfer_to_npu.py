"""torch_npu.contrib.transfer_to_npu: on Ascend it patches torch.cuda onto the NPU, so a file that
imports it is CUDA code; under `torchport run` CUDA is redirected to the target already, so the
stand-in does nothing (its import is logged)."""
