"""detect.read: which files --distributed changes, and why the others are left alone (TP200)."""

import pytest

from torchport.distribute import Options, distribute_source
from torchport.distribute.detect import read
from torchport.distribute.edits import Read
from torchport.findings import Operation

TRAINS = "    for x in data:\n        model(x).sum().backward()\n        optimizer.step()\n"


def plan(source: str, entry=None):
    return read(Read.of(source), Options(entry=entry))


def notes(p) -> list[tuple[int, str]]:
    return [(n.start_line, n.message) for n in p.notes]


@pytest.mark.parametrize("source", [
    pytest.param("import torch\ndef main():\n" + TRAINS + "if __name__ == '__main__':\n    main()\n", id="a __main__ guard"),
    pytest.param('import torch\ndef main():\n' + TRAINS + 'if "__main__" == __name__:\n    main()\n', id="a guard, reversed"),
    pytest.param("import torch\nfor x in data:\n    model(x).sum().backward()\n", id="a loop that calls backward"),
    pytest.param("import torch\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", id="an optimizer built"),
    pytest.param("import torch\ndef train():\n" + TRAINS + "for epoch in range(3):\n    train()\n",
                 id="a module-level loop over a function of the file that trains"),
    pytest.param("import torch\nclass Trainer:\n    def fit(self):\n" + TRAINS.replace("    ", "        ")
                 + "def main():\n    Trainer().fit()\nif __name__ == '__main__':\n    main()\n",
                 id="a guard reaching a trainer class's method"),
    pytest.param("import torch\ndef main():\n    opt = torch.optim.Adam(model.parameters())\n    Runner(opt).run()\n"
                 "if __name__ == '__main__':\n    main()\n", id="a guard reaching an optimizer built"),
])
def test_an_entry_script_is_distributed(source):
    found = plan(source)
    assert found.entry and found.to_distribute and found.single_card and not found.already


def test_a_program_that_does_not_import_torch_is_no_training_entry():
    assert not plan("import argparse\nif __name__ == '__main__':\n    raise SystemExit(main())\n").entry


def test_the_main_guard_is_seen():
    assert plan("import torch\nif __name__ == '__main__':\n    main()\n").main_guard
    assert not plan("import torch\nfor x in data:\n    x.backward()\n").main_guard


def test_a_module_that_trains_in_functions_only_is_not_an_entry_and_says_so():
    found = plan("import torch\ndef train(model, data):\n" + TRAINS)
    assert not found.entry
    assert [line for line, _ in notes(found)] == [4]  # the first backward()
    assert "a module the entry script imports" in notes(found)[0][1]


@pytest.mark.parametrize("source", [
    pytest.param("import argparse\nimport torch\ndef validate(args):\n    with torch.no_grad():\n"
                 "        for x in loader:\n            model(x)\nif __name__ == '__main__':\n"
                 "    validate(parser.parse_args())\n", id="an evaluation script reading its command line"),
    pytest.param("import torch\nfrom flask import Flask\napp = Flask(__name__)\n@app.route('/')\ndef predict():\n"
                 "    return model(torch.zeros(1)).tolist()\nif __name__ == '__main__':\n    app.run()\n",
                 id="a server"),
    pytest.param("import torch\ndef export(m):\n    torch.onnx.export(m, torch.zeros(1), 'm.onnx')\n"
                 "def train():\n" + TRAINS + "if __name__ == '__main__':\n    export(model)\n",
                 id="an export script whose training function its __main__ never reaches"),
])
def test_a_script_whose_entry_reaches_no_training_is_not_an_entry(source):
    found = plan(source)
    assert not found.entry
    assert "trains nothing in this file" in notes(found)[0][1]


def test_a_main_block_that_trains_nothing_is_not_an_entry_and_says_so():
    found = plan("import torch\nclass Net: pass\nif __name__ == '__main__':\n    print(Net())\n")
    assert not found.entry and [line for line, _ in notes(found)] == [3]


@pytest.mark.parametrize("header", ["", "# Copyright (c) Someone.\n# Licensed under the MIT license.\n\n"],
                         ids=["no header", "a license header above the first statement"])
def test_the_row_of_a_main_block_that_trains_nothing_is_at_its_if(header):
    """(it was short by the header's lines: LibCST keeps a module's first comments apart from its statements)"""
    source = header + '"""Sample images."""\nimport torch\n\n# the entry point\nif __name__ == "__main__":\n    print(torch.zeros(1))\n'
    found = plan(source)
    line = source.splitlines().index('if __name__ == "__main__":') + 1
    assert [row for row, _ in notes(found)] == [line]


def test_a_module_of_definitions_gets_no_row():
    found = plan("import torch\nclass Net(torch.nn.Module):\n    pass\n")
    assert not found.entry and found.notes == []


def test_the_entry_option_overrides_the_guess():
    library = "import torch\nclass Net: pass\n"
    assert plan(library, entry=True).to_distribute
    assert not plan("import torch\nfor x in d:\n    x.backward()\n", entry=False).to_distribute


@pytest.mark.parametrize(("source", "why"), [
    ("import torch.distributed as dist\ndist.init_process_group('nccl')\n", "it makes its process group, line 2"),
    ("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n",
     "it wraps a model in DistributedDataParallel, line 2"),
    ("import os\nrank = int(os.environ['LOCAL_RANK'])\n", "it reads the launcher's LOCAL_RANK, line 2"),
    ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--local_rank', type=int)\n",
     "it reads the launcher's --local_rank, line 3"),
    ("p.add_argument('--local-rank', type=int, default=0)\n", "it reads the launcher's --local-rank, line 1"),
    ("from accelerate import Accelerator\naccelerator = Accelerator()\n",
     "accelerate's Accelerator starts and wraps its processes, line 2"),
])
def test_a_distributed_script_is_left_alone_with_a_row_saying_why(source, why):
    found = plan(source, entry=True)
    assert found.already == why
    assert not found.to_distribute and not found.single_card
    assert [(n.code, n.operation) for n in found.notes] == [("TP200", Operation.NOTE)]
    assert why in found.notes[0].message
    result = distribute_source(source, "t.py", Options(entry=True))
    assert result.source == source and not result.changed


SPAWNED = ("import torch.distributed as dist\nimport torch.multiprocessing as mp\n"
           "def worker(rank, n):\n    dist.init_process_group('nccl', rank=rank, world_size=n)\n"
           "if __name__ == '__main__':\n    mp.spawn(worker, args=(2,), nprocs=2)\n")


def test_a_distributed_script_that_spawns_has_only_its_spawn_changed():
    found = plan(SPAWNED)
    assert found.spawns and found.already and found.to_distribute and not found.single_card
    assert "except its mp.spawn" in found.notes[0].message


def test_a_spawn_without_a_process_group_is_left_alone():
    source = "import torch.multiprocessing as mp\ndef train(rank, model):\n" + TRAINS + "mp.spawn(train, args=(m,), nprocs=4)\n"
    found = plan(source)
    assert not found.to_distribute and not found.spawns
    assert notes(found)[0][0] == 6 and "makes no process group" in notes(found)[0][1]


def test_distributing_twice_changes_nothing_more():
    source = ("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nprint('done')\n")
    once = distribute_source(source).source
    assert once != source
    assert distribute_source(once).source == once


def test_a_file_that_is_not_python_is_returned_as_it_is():
    assert distribute_source("def (:\n").source == "def (:\n"


def test_in_a_distributed_script_that_spawns_nothing_but_the_spawn_changes():
    source = SPAWNED.replace("    dist.init_process_group", "    loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)\n"
                             "    print(rank)\n    dist.init_process_group")
    result = distribute_source("import torch\n" + source)
    assert "DataLoader(ds, batch_size=8, shuffle=True)" in result.source and "    print(rank)\n" in result.source
    assert "WORLD_SIZE =" not in result.source and 'if "LOCAL_RANK" in os.environ:' in result.source  # (no setup block)


# Files that spell a word of training (optim, step, spawn...) but, as `ast` shows, train nowhere are
# planned without a LibCST tree; any sign of training, spawning or distribution sends a file to LibCST.
WORDS_BUT_NO_TRAINING = {
    "a checkpoint helper": ("import torch\n\ndef save(model, optimizer, step):\n"
                            "    torch.save({'model': model.state_dict(), 'optim': optimizer.state_dict(), 'step': step}, 'c.pt')\n"),
    "an evaluation script": ("import torch\nfrom torch import optim\n\ndef evaluate(model):\n    return model(torch.zeros(1))\n\n"
                             "if __name__ == '__main__':\n    print(evaluate(torch.nn.Linear(1, 1)))\n"),
}
TRAINING_SIGNS = {
    "backward": "import torch\ndef f(loss):\n    loss.backward()\n",
    "an optimizer through an alias": "import torch.optim as o\ndef f(m):\n    return o.AdamW(m.parameters())\n",
    "a spawn": "import torch.multiprocessing as mp\nif __name__ == '__main__':\n    mp.spawn(print, nprocs=2)\n",
    "a process group": "import torch.distributed as dist\ndef setup(step):\n    dist.init_process_group('gloo')\n",
    "the launcher's rank": "import os, torch\nstep = int(os.environ['LOCAL_RANK'])\n",
    "a name bound to torch in one scope only": ("import torch\ndef f(step):\n    from torch import optim\n    return optim\n"
                                                "def g(optim):\n    return optim.SGD([])\n"),
}


@pytest.mark.parametrize("source", [*WORDS_BUT_NO_TRAINING.values(), *TRAINING_SIGNS.values()],
                         ids=[*WORDS_BUT_NO_TRAINING, *TRAINING_SIGNS])
def test_a_file_ast_shows_trains_nowhere_is_planned_without_libcst_and_as_libcst_plans_it(source, monkeypatch):
    found = Read(source)
    quick = read(found, Options())
    assert (found._module is None) is (source in WORDS_BUT_NO_TRAINING.values())
    monkeypatch.setattr("torchport.distribute.detect._trains_nowhere", lambda found, tree: False)
    assert repr(read(Read(source), Options())) == repr(quick)
