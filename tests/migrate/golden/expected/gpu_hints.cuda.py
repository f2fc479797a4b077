"""Scripts that tell the user to use an idle GPU (pytorch/examples, OpenNMT, PyTorch-GAN metrics)."""
import argparse
import logging
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
logger = logging.getLogger(__name__)

torch.manual_seed(args.seed)
if torch.cuda.is_available():
    if not args.cuda:
        print("WARNING: You have a CUDA device, so you should probably run with --cuda")
    else:
        torch.cuda.manual_seed(args.seed)

if torch.cuda.is_available() and not args.cuda:
    logger.warning("You have a CUDA device, so you should probably run with --cuda")

if args.cuda:
    dtype = torch.cuda.FloatTensor
else:
    # a GPU left idle?
    if torch.cuda.is_available():
        print("WARNING: You have a CUDA device, so you should probably set cuda=True")
    dtype = torch.FloatTensor

if torch.cuda.is_available():
    print("training on", torch.cuda.get_device_name(0))
print("FINAL", dtype)
