"""`migrate --from npu`: source written for the Ascend NPU (torch_npu) rewritten into CUDA's own
dialect, which the rules then move to the target, as apex_to_torch does for apex code."""
