"""Scripts that tell the user to use an idle GPU (pytorch/examples, OpenNMT, PyTorch-GAN metrics)."""
import argparse
import logging
import platform
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
logger = logging.getLogger(__name__)

torch.manual_seed(args.seed)
if torch.cpu.is_available():
    if args.cuda:
        torch.manual_seed(args.seed)

if args.cuda:
    dtype = torch.FloatTensor
else:
    # a GPU left idle?
    dtype = torch.FloatTensor

if torch.cpu.is_available():
    print("training on", platform.processor())
print("FINAL", dtype)
