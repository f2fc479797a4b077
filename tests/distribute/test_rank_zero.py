"""rank_zero.rank_zero: saves and progress on rank 0 alone; a barrier before a checkpoint is read."""

import pytest

from torchport.distribute.detect import Plan
from torchport.distribute.rank_zero import rank_zero

from _distribute_steps import run


def test_consecutive_prints_and_saves_go_under_one_rank_zero_test():
    source = ("import torch\nfor epoch in range(3):\n    train()\n    # progress\n    print('epoch', epoch)\n"
              "    torch.save(model.state_dict(), 'last.pt')\n    step += 1\n    print('done')\n")
    text, rows = run(rank_zero, source)
    assert text == ("import torch\nfor epoch in range(3):\n    train()\n    # progress\n    if RANK == 0:\n"
                    "        print('epoch', epoch)\n        torch.save(model.state_dict(), 'last.pt')\n    step += 1\n"
                    "    if RANK == 0:\n        print('done')\n")
    assert rows == [(5, "TP205", "MODIFY"), (8, "TP205", "MODIFY")]


@pytest.mark.parametrize("line", [
    "logger.info('loss %f', loss)", "logging.info('step')", "self.logger.debug('x')", "log.info('x')",
    "save_checkpoint({'state': sd}, is_best)", "utils.save_model(model, path)", "model.save_pretrained(out)",
    "trainer.save_ckpt(path)",
])
def test_logging_of_progress_and_the_scripts_checkpoint_savers_run_on_rank_zero(line):
    source = f"import torch\ndef f():\n    {line}\n"
    assert run(rank_zero, source)[0] == f"import torch\ndef f():\n    if RANK == 0:\n        {line}\n"


@pytest.mark.parametrize("line", ["logger.warning('x')", "print('error', file=sys.stderr)", "results.info('x')", "save(x)", "x = print_it()",
                                  "print('a'); y = 1"])
def test_warnings_and_other_calls_run_on_every_rank(line):
    source = f"import torch\n{line}\n"
    assert run(rank_zero, source) == (source, [])


def test_the_save_inside_a_checkpoint_saver_the_script_calls_is_guarded_at_the_call_only():
    source = ("import torch\ndef save_checkpoint(state, path):\n    torch.save(state, path)\n"
              "for e in range(2):\n    save_checkpoint(sd, 'c.pt')\n")
    text, _ = run(rank_zero, source)
    assert "def save_checkpoint(state, path):\n    torch.save(state, path)\n" in text
    assert "    if RANK == 0:\n        save_checkpoint(sd, 'c.pt')\n" in text


def test_progress_bars_show_on_rank_zero():
    source = ("from tqdm import tqdm\nimport tqdm as t\nfor x in tqdm(loader):\n    pass\nbar = t.tqdm(total=n, leave=False)\n"
              "quiet = tqdm(loader, disable=args.quiet)\n")
    text, rows = run(rank_zero, source)
    assert "for x in tqdm(loader, disable=RANK != 0):\n" in text
    assert "bar = t.tqdm(total=n, leave=False, disable=RANK != 0)\n" in text
    assert "quiet = tqdm(loader, disable=args.quiet)\n" in text
    assert rows == [(3, "TP205", "MODIFY"), (5, "TP205", "MODIFY")]


def test_a_barrier_comes_before_a_checkpoint_the_script_saves_is_read_back():
    source = ("import torch\nfor e in range(2):\n    train()\n    torch.save(model.state_dict(), 'best.pt')\n"
              "# evaluate the best\nmodel.load_state_dict(torch.load('best.pt'))\nstate = torch.load(args.resume)\n")
    text, rows = run(rank_zero, source)
    assert text.endswith("# evaluate the best\ntorch.distributed.barrier()\nmodel.load_state_dict(torch.load('best.pt'))\n"
                         "torch.distributed.barrier()\nstate = torch.load(args.resume)\n")
    assert (6, "TP205", "INSERT") in rows and (7, "TP205", "INSERT") in rows


def test_no_barrier_where_the_script_saves_nothing_or_a_dataset_reads_its_samples():
    loads = "import torch\nsd = torch.load('pretrained.pt')\n"
    assert run(rank_zero, loads) == (loads, [])
    dataset = ("import torch\nclass Data:\n    def __getitem__(self, i):\n        return torch.load(self.files[i])\n"
               "torch.save(m, 'm.pt')\n")
    assert "barrier" not in run(rank_zero, dataset)[0]


def test_a_file_distributed_already_is_left_alone():
    source = "import torch\nprint('x')\ntorch.save(m, 'm.pt')\n"
    assert run(rank_zero, source, Plan(entry=True, already="x", spawns=True)) == (source, [])


def test_a_checkpoint_in_a_folder_each_process_makes_for_itself_is_saved_and_read_by_each():
    source = ("import os\nimport tempfile\nimport torch\nckpt_dir = tempfile.mkdtemp()\npath = os.path.join(ckpt_dir, 'b.pt')\n"
              "torch.save(sd, path)\nprint('saved')\nsd = torch.load(path)\n")
    text, _ = run(rank_zero, source)
    assert "\ntorch.save(sd, path)\nif RANK == 0:\n    print('saved')\nsd = torch.load(path)\n" in text
    assert "barrier" not in text


# A trainer class in a module the entry script imports (SimCLR's simclr.py): it saves its own
# checkpoint, so every process would write it.
TRAINER_MODULE = '''import os
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for x in loader:
                self.model(x).sum().backward()
                self.optimizer.step()
        print("done")
        torch.save(self.model.state_dict(), os.path.join("runs", "last.pt"))
'''


def test_a_module_that_trains_for_the_entry_script_saves_and_prints_on_rank_0():
    from torchport.distribute import Options, distribute_source

    done = distribute_source(TRAINER_MODULE, "trainer.py", Options())
    assert not done.plan.entry and done.plan.trainer_module
    text = done.source
    assert 'RANK = int(os.environ.get("RANK", 0))' in text.splitlines()[2]
    assert "        if RANK == 0:\n            print(\"done\")\n            torch.save(" in text
    assert "init_process_group" not in text and "DistributedDataParallel" not in text
    import torch

    for rank, saved in (("0", True), ("1", False)):
        calls, namespace = [], {"__name__": "trainer"}
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RANK", rank)
            patch.setattr(torch, "save", lambda *a, **k: calls.append("save"))
            exec(compile(text, "trainer.py", "exec"), namespace)
            model = torch.nn.Linear(2, 1)
            namespace["Trainer"](model, torch.optim.SGD(model.parameters(), lr=0.1)).train([torch.ones(1, 2)], 1)
        assert (calls == ["save"]) is saved


def test_a_module_of_definitions_that_trains_nothing_is_unchanged():
    from torchport.distribute import Options, distribute_source

    source = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n"
    assert distribute_source(source, "net.py", Options()).source == source
