"""Two trainers whose data vary in different ways, as real projects' do, for the remedies' tests.

YOLO: as ultralytics' yolov5 loads it, every batch full (16 images, 4 a batch) and only the boxes
vary: the collate function stacks the images and concatenates the labels, one row a box with its
image's index first (`torch.cat(label, 0)`), and the loss builds its targets from those rows.
TEXT: token sequences of varying length padded to the batch's longest, 10 samples in batches of
4, so that each epoch ends with a batch of 2.
"""

from __future__ import annotations

YOLO = '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Boxes(Dataset):
    def __init__(self, count):
        self.boxes = [(i * 7) % 9 + 1 for i in range(count)]

    def __len__(self):
        return len(self.boxes)

    def __getitem__(self, index):
        n = self.boxes[index]
        labels = torch.zeros(n, 6)
        labels[:, 1] = index % 3
        labels[:, 2:] = torch.rand(n, 4)
        return torch.rand(3, 32, 32), labels

    @staticmethod
    def collate_fn(batch):
        im, label = zip(*batch)
        for i, lb in enumerate(label):
            lb[:, 0] = i  # the image's index, for build_targets
        return torch.stack(im, 0), torch.cat(label, 0)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.head = nn.Conv2d(8, 3 + 5, 1)

    def forward(self, x):
        return self.head(self.backbone(x).relu())


def build_targets(pred, targets):
    b, c = targets[:, 0].long(), targets[:, 1].long()
    gxy = (targets[:, 2:4] * pred.shape[-1]).long().clamp(0, pred.shape[-1] - 1)
    return b, c, gxy


def compute_loss(pred, targets):
    b, c, gxy = build_targets(pred, targets)
    picked = pred[b, :, gxy[:, 1], gxy[:, 0]]
    return nn.functional.cross_entropy(picked[:, 5:], c) + picked[:, :4].pow(2).mean()


torch.manual_seed(0)
model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Boxes(16), batch_size=4, shuffle=False, collate_fn=Boxes.collate_fn)
for epoch in range(1):
    for i, (imgs, targets) in enumerate(loader):
        loss = compute_loss(model(imgs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("trained")
'''

TEXT = '''\
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def collate(samples):
    tokens, labels = zip(*samples)
    return pad_sequence(tokens, batch_first=True), torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, tokens):
        return self.out(self.embed(tokens).mean(1))


torch.manual_seed(0)
samples = [(torch.randint(1, 50, (3 + (i * 5) % 7,)), i % 2) for i in range(10)]
model = Classifier()
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(samples, batch_size=4, collate_fn=collate)
for epoch in range(2):
    for tokens, labels in loader:
        loss = nn.functional.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("trained")
'''
