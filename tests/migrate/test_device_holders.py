"""Which names hold a device (or a device's name) is read from every binding of the name in the file."""

import ast

from torchport.migrate.device_holders import device_names

SOURCE = '''
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--gpu", type=int, default=None)
args = parser.parse_args()

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
name = "cuda" if args.gpu is None else f"cuda:{args.gpu}"
copy = device
gpu = args.gpu
current = torch.cuda.current_device()
target = "cuda"
target = 0

class Trainer:
    def __init__(self, where):
        self.device = where
        self.home = copy

def move(t, dev):
    return t.cuda(dev)

for each in ["cuda:0", "cuda:1"]:
    pass
x = torch.ones(1).cuda(torch.ones(1).device)
y = x.cuda(args.device)
'''


def test_names_bound_only_to_devices_or_their_names_hold_a_device():
    names = device_names(ast.parse(SOURCE))
    assert {"device", "name", "copy", "self.home"} <= names


def test_a_device_attribute_the_file_never_sets_holds_one():
    assert "torch.ones(1).device" not in device_names(ast.parse(SOURCE))  # (not a dotted name)
    assert "args.device" in device_names(ast.parse(SOURCE))
    assert "batch.device" in device_names(ast.parse("y = x.cuda(batch.device)"))


def test_an_int_option_named_device_is_not_a_device():
    source = 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--device", type=int)\nargs = p.parse_args()\nx.cuda(args.device)'
    assert "args.device" not in device_names(ast.parse(source))


def test_a_name_with_any_other_binding_is_not_known_to_hold_a_device():
    names = device_names(ast.parse(SOURCE))
    assert not names & {"gpu", "current", "target", "self.device", "where", "dev", "each", "args.gpu"}
