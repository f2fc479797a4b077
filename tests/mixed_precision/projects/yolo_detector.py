"""A YOLO-style detector trainer (in the style of YOLOv5's train.py): three parameter groups
(BatchNorm weights without decay, weights with decay, biases) given to one SGD through
add_param_group, a loss object that returns the loss and its parts, gradient accumulation,
and a checkpoint dict saved each epoch. Random images and boxes stand in for the dataset."""

import torch
import torch.nn as nn

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Detector(nn.Module):
    def __init__(self, anchors=3, classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.SiLU(),
                                      nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.SiLU())
        self.head = nn.Conv2d(32, anchors * (5 + classes), 1)

    def forward(self, x):
        return self.head(self.backbone(x))


class ComputeLoss:
    def __init__(self, model):
        self.bce = nn.BCEWithLogitsLoss()
        self.box_gain, self.obj_gain = 0.05, 1.0

    def __call__(self, p, targets):
        box = (p[:, :4].sigmoid() - targets[:, :4]).pow(2).mean()
        obj = self.bce(p[:, 4], targets[:, 4])
        cls = self.bce(p[:, 5:9], targets[:, 5:9])
        loss = self.box_gain * box + self.obj_gain * obj + cls
        return loss * p.shape[0], torch.stack((box, obj, cls)).detach()


def train(hyp, epochs=2, batches=10, accumulate=1):
    torch.manual_seed(0)
    model = Detector().to(device)
    g0, g1, g2 = [], [], []  # BatchNorm weights, weights with decay, biases
    for v in model.modules():
        if hasattr(v, "bias") and isinstance(v.bias, nn.Parameter):
            g2.append(v.bias)
        if isinstance(v, nn.BatchNorm2d):
            g0.append(v.weight)
        elif hasattr(v, "weight") and isinstance(v.weight, nn.Parameter):
            g1.append(v.weight)
    optimizer = torch.optim.SGD(g2, lr=hyp["lr0"], momentum=hyp["momentum"], nesterov=True)
    optimizer.add_param_group({"params": g1, "weight_decay": hyp["weight_decay"]})
    optimizer.add_param_group({"params": g0})
    compute_loss = ComputeLoss(model)
    generator = torch.Generator().manual_seed(1)
    data = [(torch.randn(4, 3, 32, 32, generator=generator), torch.rand(4, 9, 8, 8, generator=generator))
            for _ in range(batches)]
    last_opt_step = -1
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        for i, (imgs, targets) in enumerate(data):
            ni = i + batches * epoch
            imgs = imgs.to(device, non_blocking=True).float()
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
            loss.backward()
            if ni - last_opt_step >= accumulate:
                optimizer.step()
                optimizer.zero_grad()
                last_opt_step = ni
            print(f"epoch {epoch} step {i} loss {loss.item():.6f}")
        ckpt = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(ckpt, "last.pt")


if __name__ == "__main__":
    train({"lr0": 0.01, "momentum": 0.937, "weight_decay": 5e-4})
