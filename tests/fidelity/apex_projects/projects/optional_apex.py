"""Optional apex, as timm's train.py of 2020 wrote it: apex imported if it is there (`has_apex`),
native torch.cuda.amp if not, `--amp` choosing apex first.

Needs a CUDA GPU as it is (and apex for its apex branch).
"""
import argparse
from contextlib import suppress

import torch
import torch.nn as nn

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False

has_native_amp = False
try:
    if getattr(torch.cuda.amp, 'autocast') is not None:
        has_native_amp = True
except AttributeError:
    pass

parser = argparse.ArgumentParser(description='PyTorch Training')
parser.add_argument('--amp', action='store_true', default=False,
                    help='use NVIDIA Apex AMP or Native AMP for mixed precision training')
parser.add_argument('--apex-amp', action='store_true', default=False,
                    help='Use NVIDIA Apex AMP mixed precision')
parser.add_argument('--native-amp', action='store_true', default=False,
                    help='Use Native Torch AMP mixed precision')
parser.add_argument('--steps', type=int, default=8)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--lr', type=float, default=0.3)


def main():
    args = parser.parse_args()

    # resolve AMP arguments based on PyTorch / Apex availability
    use_amp = None
    if args.amp:
        # for backwards compat, `--amp` arg tries apex before native amp
        if has_apex:
            args.apex_amp = True
        elif has_native_amp:
            args.native_amp = True
    if args.apex_amp and has_apex:
        use_amp = 'apex'
    elif args.native_amp and has_native_amp:
        use_amp = 'native'
    elif args.apex_amp or args.native_amp:
        print("Neither APEX or native Torch AMP is available, using float32.")

    torch.manual_seed(0)
    inputs = torch.randn(args.steps, args.batch_size, 16) * 2
    targets = inputs[..., :4].argmax(dim=-1)  # a class the model can learn

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train_loss_fn = nn.CrossEntropyLoss().cuda()

    # setup automatic mixed-precision (AMP) loss scaling and op casting
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if use_amp == 'apex':
        model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
        print('Using NVIDIA APEX AMP. Training in mixed precision.')
    elif use_amp == 'native':
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = torch.cuda.amp.GradScaler()
        print('Using native Torch AMP. Training in mixed precision.')
    else:
        print('AMP not enabled. Training in float32.')

    for step in range(args.steps):
        input, target = inputs[step].cuda(), targets[step].cuda()
        with amp_autocast():
            output = model(input)
            loss = train_loss_fn(output, target)

        optimizer.zero_grad()
        if use_amp == 'apex':
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        elif loss_scaler is not None:
            loss_scaler.scale(loss).backward()
            loss_scaler.step(optimizer)
            loss_scaler.update()
        else:
            loss.backward()
            optimizer.step()
        print(f'step {step} loss {loss.item():.6f}')

    print(f'FINAL project=optional_apex amp={use_amp} steps={args.steps} loss={loss.item():.6f}')


if __name__ == '__main__':
    main()
