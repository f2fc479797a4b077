"""A DataParallel trainer at the top level of its file: BatchNorm, a method of its own, a saved
state dict taken through `.module` when DataParallel wraps it."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(torch.relu(self.bn(self.fc(x))))

    def weights(self):
        return self.out.weight


torch.manual_seed(0)
model = nn.DataParallel(Net())
model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4).cuda(), torch.randn(8, 2).cuda()) for _ in range(3)]
for epoch in range(2):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("epoch", epoch, "loss", round(loss.item(), 6))
state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
torch.save(state, "dp.pt")
print("FINAL", " ".join(f"{v:.6f}" for v in model.weights().flatten().tolist()))
