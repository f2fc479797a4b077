"""Which names hold a CUDA device index is read from where their values come from, not from their spelling."""

import ast

from torchport.migrate.device_indices import index_names

SOURCE = '''
import argparse, os
import torch.distributed as dist
import torch.multiprocessing as mp

local_rank = int(os.environ["LOCAL_RANK"])
rank = int(os.environ.get("RANK", 0))
world = int(os.environ["WORLD_SIZE"])
gpu = dist.get_rank()
device = "cuda"
dtype = torch.float16

class Trainer:
    def __init__(self):
        self.gpu_id = local_rank
        self.copy = self.gpu_id

def worker(proc, world_size):
    pass

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)
parser.add_argument("--epochs", type=int, default=1)
opts = parser.parse_args()
mp.spawn(worker, args=(2,), nprocs=2)
'''


def test_ranks_from_the_environment_torch_distributed_spawn_and_argparse_are_indices():
    names = index_names(ast.parse(SOURCE))
    assert {"local_rank", "rank", "gpu", "proc", "opts.local_rank", "args.local_rank"} <= names


def test_what_is_assigned_from_an_index_is_one_too():
    assert {"self.gpu_id", "self.copy"} <= index_names(ast.parse(SOURCE))


def test_other_names_are_not_indices_whatever_they_hold():
    names = index_names(ast.parse(SOURCE))
    assert not names & {"world", "device", "dtype", "world_size", "opts.epochs"}
