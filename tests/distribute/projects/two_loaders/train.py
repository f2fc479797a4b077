"""A single-card trainer with a training and a validation loader (the check of #22's loader step)."""
import json
import os

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SHUFFLE = os.environ.get("SHUFFLE") == "1"


class Indexed(Dataset):
    """Samples that carry their own index, so a run can say which it read."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 8, generator=g)
        self.y = torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i], i


def main():
    torch.manual_seed(0)
    train_set = Indexed(96, seed=1)
    train_loader = DataLoader(train_set, batch_size=16, shuffle=SHUFFLE)
    val_loader = DataLoader(Indexed(24, seed=2), batch_size=8, shuffle=False)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen, val_seen = [], []
    for epoch in range(3):
        model.train()
        for x, y, index in train_loader:
            x, y = x.cuda(), y.cuda()
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            seen.append([epoch, index.tolist()])
        model.eval()
        with torch.no_grad():
            for x, y, index in val_loader:
                val_seen.append([epoch, index.tolist()])
    report = {"seen": seen, "val_seen": val_seen, "lr": optimizer.param_groups[0]["lr"], "weights": [p.detach().cpu().flatten().tolist() for p in model.parameters()]}
    with open(os.environ["REPORT"] + "." + os.environ.get("RANK", "0") + ".json", "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
