"""apex behind helpers, as domain-adaptation and timm-derived code writes it: a module-level
`amp_backward(loss, optimizer)` (ADVENT style: several losses backward before one step) and a
timm-style `ApexScaler` (backward, clipping through `amp.master_params`, step; its state saved
under "amp"), apex optional (`amp = None` without it).

Needs apex and a CUDA GPU as it is.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    amp = None
    APEX_AVAILABLE = False


def amp_backward(loss, optimizer, retain_graph=False):
    if APEX_AVAILABLE:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward(retain_graph=retain_graph)
    else:
        loss.backward(retain_graph=retain_graph)


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward(create_graph=create_graph)
        if clip_grad is not None:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        if 'state_dict' in amp.__dict__:
            return amp.state_dict()

    def load_state_dict(self, state_dict):
        if 'load_state_dict' in amp.__dict__:
            amp.load_state_dict(state_dict)


def entropy_loss(logits):
    p = F.softmax(logits, dim=1)
    return -(p * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--warmup-steps', type=int, default=4)
    parser.add_argument('--steps', type=int, default=8)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--learning-rate', type=float, default=0.3)
    parser.add_argument('--lambda-ent', type=float, default=0.5)
    parser.add_argument('--clip-grad', type=float, default=0.5)
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.manual_seed(0)
    source = torch.randn(args.steps, args.batch_size, 16) * 3
    labels = source[..., :4].argmax(dim=-1)
    target_domain = torch.randn(args.steps, args.batch_size, 16) * 3 + 0.5

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss_scaler = ApexScaler()

    for i_iter in range(args.steps):
        x, y = source[i_iter].to(device), labels[i_iter].to(device)
        t = target_domain[i_iter].to(device)
        optimizer.zero_grad()
        if i_iter < args.warmup_steps:
            # supervised on the source domain, entropy on the target domain: two backwards, one step
            loss = F.cross_entropy(model(x), y)
            amp_backward(loss, optimizer)
            loss_ent = args.lambda_ent * entropy_loss(model(t))
            amp_backward(loss_ent, optimizer)
            optimizer.step()
        else:
            loss = F.cross_entropy(model(x), y)
            loss_scaler(loss, optimizer, clip_grad=args.clip_grad)
        print(f'iter {i_iter} loss {loss.item():.6f}')

    state = {'model': model.state_dict(), loss_scaler.state_dict_key: loss_scaler.state_dict()}
    assert state['amp'] is not None
    print(f'FINAL project=helper_functions steps={args.steps} loss={loss.item():.6f}')


if __name__ == '__main__':
    main()
