"""The batch split is kept only where nothing else reads the batch size: code that builds its
labels from `args.batch_size` (a SimCLR-style contrastive loss) gets the batch per process and
the learning rate scaled instead (batch_reads.py)."""

import libcst as cst
import pytest
import torch

from torchport.distribute import Options, distribute_source
from torchport.distribute.batch_reads import read_elsewhere
from torchport.distribute.edits import calls, dotted

LOADER = "train_loader = torch.utils.data.DataLoader(train_set, batch_size={batch}, shuffle=True)\n"


def reads(source: str, batch: str) -> str:
    module = cst.parse_module(source)
    loader = next(c for c in calls(module) if (dotted(c.func) or "").endswith("DataLoader"))
    return read_elsewhere(module, loader, cst.parse_expression(batch))


@pytest.mark.parametrize(("source", "batch"), [
    pytest.param("import torch\nbatch_size = 64\n" + LOADER.format(batch="batch_size"), "batch_size", id="only the loader"),
    pytest.param("import torch\nstart, batch_size = 1, 64\n" + LOADER.format(batch="batch_size")
                 + "print('%d steps' % (len(train_set) // batch_size))\nsys.stdout.write('%d' % batch_size)\n",
                 "batch_size", id="a tuple binding, printing"),
    pytest.param("import torch\ndef train(args, model):\n    for i in range(args.epochs):\n        pass\n"
                 + LOADER.format(batch="args.batch_size") + "train(args, model)\n", "args.batch_size",
                 id="args handed to a function of the file that does not read it"),
    pytest.param("import torch\n" + LOADER.format(batch="64") + "x = 64\n", "64", id="a literal"),
])
def test_a_batch_size_nothing_else_reads_is_split(source, batch):
    assert reads(source, batch) == ""


@pytest.mark.parametrize(("source", "batch", "words"), [
    pytest.param("import torch\n" + LOADER.format(batch="args.batch_size") + "trainer = SimCLR(model=model, args=args)\n",
                 "args.batch_size", "args is handed to SimCLR, whose code is not in this file", id="args handed to an import"),
    pytest.param("import torch\n" + LOADER.format(batch="args.batch_size")
                 + "def loss(f):\n    labels = torch.arange(args.batch_size)\n", "args.batch_size",
                 "args.batch_size reads the batch size elsewhere", id="the same attribute read in a function"),
    pytest.param("import torch\nclass Trainer:\n    def info_nce(self, f):\n        return torch.arange(self.args.batch_size)\n"
                 + LOADER.format(batch="args.batch_size") + "Trainer(args)\n", "args.batch_size",
                 "self.args.batch_size reads the batch size elsewhere", id="read through self.args"),
    pytest.param("import torch\nbatch_size = 64\n" + LOADER.format(batch="batch_size") + "lr = 0.1 * batch_size / 256\n",
                 "batch_size", "batch_size is read elsewhere", id="a learning rate from the batch"),
])
def test_a_batch_size_read_elsewhere_is_found(source, batch, words):
    assert words in reads(source, batch)


SIMCLR_STYLE = '''import torch
from trainer import Contrastive

def main(args):
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), args.lr)
    Contrastive(model=model, optimizer=optimizer, args=args).train(train_loader)

if __name__ == "__main__":
    main(parser.parse_args())
'''


def test_a_batch_size_handed_on_is_kept_per_process_and_the_learning_rate_scaled():
    done = distribute_source(SIMCLR_STYLE, "run.py", Options(entry=True))
    text = done.source
    assert "batch_size=args.batch_size," in text and "// WORLD_SIZE" not in text
    assert "args.lr * WORLD_SIZE" in text and "DistributedSampler(train_set" in text
    rows = [f.message for f in done.findings if f.code == "TP206"]
    assert any("kept on each process, not split: args is handed to Contrastive" in m for m in rows)


def test_the_labels_a_contrastive_loss_builds_from_the_batch_size_match_the_batch_it_is_given():
    """Why: with batch // WORLD_SIZE in the loader, labels of args.batch_size index past the logits."""
    batch_size, world = 8, 2

    def info_nce(features, n):
        labels = torch.cat([torch.arange(n) for _ in range(2)])
        logits = features @ features.T
        return logits[torch.arange(2 * n), labels]

    info_nce(torch.randn(2 * batch_size, 4), batch_size)  # kept per process: fine
    with pytest.raises(IndexError):
        info_nce(torch.randn(2 * (batch_size // world), 4), batch_size)  # split: what SimCLR hit
