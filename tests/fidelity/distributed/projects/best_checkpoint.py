"""A single-card trainer with validation and checkpointing, written top to bottom without a main()
as tutorial-style training scripts are: each epoch it validates and, when the validation loss is the
best so far, saves the model (`torch.save(model.state_dict(), 'best_model.pt')`, the PyTorch
save-and-load tutorial's calls, kept for the best validation loss as debuggercafe's SaveBestModel
and the many public scripts that copy it do); at the end it reads the best model back
(`model.load_state_dict(torch.load('best_model.pt'))`) and tests it. The device is the first GPU
by name ("cuda:0").

Run: python best_checkpoint.py. It needs a CUDA GPU as it is.

Test hooks, off unless set (nothing else changes): PROJECT_SEEN_LOG and PROJECT_WEIGHTS name files,
".<pid>" appended (one per process), for the sample indices each training step took ("epoch i j
...") and the weights of the best model as read back (JSON).
"""
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

SEEN_LOG = os.environ.get("PROJECT_SEEN_LOG")
WEIGHTS_OUT = os.environ.get("PROJECT_WEIGHTS")

EPOCHS = 4
BATCH_SIZE = 8
LEARNING_RATE = 0.1

torch.manual_seed(0)
device = torch.device("cuda:0")


def make_split(size, seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(size, 6, generator=generator)
    y = (x[:, :2].sum(dim=1) > 0).long()
    return TensorDataset(x, y, torch.arange(size))  # (features, class, the sample's index)


train_set, val_set, test_set = make_split(64, 1), make_split(32, 2), make_split(32, 3)
train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=False)
val_loader = DataLoader(val_set, batch_size=16, shuffle=False)
test_loader = DataLoader(test_set, batch_size=16, shuffle=False)

model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
model = model.to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)


def evaluate(loader):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for x, y, _ in loader:
            x, y = x.to(device), y.to(device)
            output = model(x)
            total += criterion(output, y).item() * len(y)
            correct += (output.argmax(dim=1) == y).sum().item()
    return total / len(loader.dataset), correct / len(loader.dataset)


best_val_loss = float("inf")
for epoch in range(EPOCHS):
    model.train()
    train_loss = 0.0
    for x, y, index in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        if SEEN_LOG:
            with open(f"{SEEN_LOG}.{os.getpid()}", "a") as log:
                log.write(f"{epoch} {' '.join(str(i) for i in index.tolist())}\n")

    val_loss, val_acc = evaluate(val_loader)
    print(f"Epoch {epoch + 1}/{EPOCHS}, Loss: {train_loss / len(train_loader):.4f}, "
          f"Val Loss: {val_loss:.4f}, Val Acc: {val_acc:.3f}")
    if val_loss < best_val_loss:
        best_val_loss = val_loss
        torch.save(model.state_dict(), "best_model.pt")
        print("Saved best model!")

model.load_state_dict(torch.load("best_model.pt"))
test_loss, test_acc = evaluate(test_loader)
if WEIGHTS_OUT:
    with open(f"{WEIGHTS_OUT}.{os.getpid()}", "w") as out:
        json.dump({k.removeprefix("module."): v.tolist() for k, v in model.state_dict().items()}, out)
print(f"FINAL project=best_checkpoint best_val_loss={best_val_loss:.6f} test_loss={test_loss:.6f} test_acc={test_acc:.3f}")
