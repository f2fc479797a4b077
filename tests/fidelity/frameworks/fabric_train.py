"""A Lightning Fabric loop in the style of litgpt's pretraining script: Fabric on CUDA with float16
mixed precision, a Trainer-free step with fabric.backward."""

import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="gpu", devices=1, precision="16-mixed")
    fabric.seed_everything(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    generator = torch.Generator().manual_seed(1)
    inputs, targets = torch.randn(32, 16, generator=generator), torch.randint(0, 4, (32,), generator=generator)
    for step in range(5):
        x, y = fabric.to_device((inputs, targets))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        fabric.print(f"step {step} loss {loss.item():.6f}")
    fabric.print("precision", fabric.strategy.precision.__class__.__name__, fabric.device.type)
    fabric.print("FINAL")


if __name__ == "__main__":
    main()
