import torch
DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def to_device(batch):
    if not (batch.device.type == DEVICE_TYPE != "cpu"):
        batch = batch.to(DEVICE_TYPE)
    return batch


on_gpu = [t.device.type == DEVICE_TYPE != "cpu" for t in tensors]
