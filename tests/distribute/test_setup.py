"""setup.insert_setup: the launcher's ranks, set_device and the process group, where the script
starts; device 0 hard-coded made each process's own device."""

import textwrap

import pytest

from torchport.distribute.detect import Plan
from torchport.distribute.setup import DESTROY, DESTROY_WHEN_MAIN, SETUP, insert_setup

from _distribute_steps import messages, run

INDENTED = "".join(f"    {line}\n" if line else "\n" for line in SETUP.splitlines())


def test_the_setup_goes_at_the_top_of_the_main_block_and_the_group_is_closed_at_its_end():
    source = "import os\nimport torch\n\n\ndef main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n"
    text, rows = run(insert_setup, source)
    assert text == ("import os\nimport torch\n\n\ndef main():\n    pass\n\n\nif __name__ == '__main__':\n"
                    + INDENTED + "    main()\n" + textwrap.indent(DESTROY, "    "))
    assert rows == [(10, "TP201", "INSERT"), (10, "TP201", "INSERT")]


def test_without_a_main_block_the_setup_follows_the_last_import_and_the_group_closes_when_it_is_the_program():
    source = '"""doc"""\nimport os\nimport torch\nx = torch.ones(2).cuda()\n'
    text, _ = run(insert_setup, source)
    assert text == '"""doc"""\nimport os\nimport torch\n\n' + SETUP + "x = torch.ones(2).cuda()\n" + DESTROY_WHEN_MAIN
    assert DESTROY_WHEN_MAIN.startswith('if __name__ == "__main__":\n    torch.distributed.barrier()\n')


def test_importing_a_script_without_a_main_block_leaves_the_importers_group_alone(tmp_path):
    """The teardown of a file with no __main__ block runs when the file is the program only."""
    text, _ = run(insert_setup, "import torch\nx = 1\n")
    calls = []
    fake = type("dist", (), {"barrier": lambda: calls.append("barrier"),
                             "destroy_process_group": lambda: calls.append("destroy")})
    tail = text[text.index(DESTROY_WHEN_MAIN):]
    torch_ns = type("torch", (), {"distributed": fake})
    exec(tail, {"__name__": "imported_module", "torch": torch_ns})
    assert calls == []
    exec(tail, {"__name__": "__main__", "torch": torch_ns})
    assert calls == ["barrier", "destroy"]


def test_module_level_code_before_the_main_block_that_reads_the_names_gets_the_setup_after_the_imports():
    source = ("import os\nimport torch\nmodel = torch.nn.parallel.DistributedDataParallel(m, device_ids=[LOCAL_RANK])\n"
              "if __name__ == '__main__':\n    main()\n")
    text, _ = run(insert_setup, source)
    assert text.index("LOCAL_RANK = int(") < text.index("model = torch.nn.parallel")
    assert ("if __name__ == '__main__':\n    main()\n    torch.distributed.barrier()\n"
            "    torch.distributed.destroy_process_group()\n") in text


@pytest.mark.parametrize(("source", "first"), [
    ("import torch\nx = 1\n", "import os\nimport torch\n"),
    ("import torch.nn as nn\nx = 1\n", "import os\nimport torch\nimport torch.nn as nn\n"),
    ("from __future__ import annotations\nimport numpy\nx = 1\n", "from __future__ import annotations\nimport os\nimport torch\nimport numpy\n"),
    ("x = 1\n", "import os\nimport torch\n"),
])
def test_os_and_torch_are_imported_where_the_file_binds_neither(source, first):
    text, _ = run(insert_setup, source)
    assert text.startswith(first)
    assert text.count("import os\n") == 1
    compile(text, "t.py", "exec")


def test_a_script_that_ends_by_exiting_keeps_its_exit_last_with_a_row():
    source = "import os, sys\nimport torch\nif __name__ == '__main__':\n    sys.exit(main())\n"
    text, rows = run(insert_setup, source)
    assert text.endswith("    sys.exit(main())\n") and "destroy_process_group" not in text
    assert (4, "TP201", "NOTE") in rows


@pytest.mark.parametrize(("line", "expected", "operation"), [
    ('device = torch.device("cuda:0")', 'device = torch.device("cuda")', "MODIFY"),
    ("device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')",
     "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "MODIFY"),
    ('device = torch.device("cuda", 0)', 'device = torch.device("cuda")', "MODIFY"),
    ("model = model.cuda(0)", "model = model.cuda()", "MODIFY"),
    ("torch.cuda.set_device(0)", None, "DELETE"),
    ("torch.cuda.set_device(args.gpu)", None, "DELETE"),
    ('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', None, "DELETE"),
])
def test_device_zero_hard_coded_becomes_each_processs_own_device(line, expected, operation):
    source = f"import os\nimport torch\n{line}\nx = 1\n"
    text, rows = run(insert_setup, source)
    assert line not in text
    if expected is not None:
        assert expected + "\n" in text
    assert (3, "TP201", operation) in rows


def test_other_devices_and_variables_are_kept():
    source = ('import os\nimport torch\nd = torch.device("cuda:1")\nm.cuda(args.gpu)\n'
              'os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus\n')
    text, rows = run(insert_setup, source)
    assert '"cuda:1"' in text and "m.cuda(args.gpu)" in text and 'os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus' in text
    assert (4, "TP201", "NOTE") in rows and (5, "TP201", "NOTE") in rows


def test_a_file_distributed_already_gets_no_setup():
    source = "import torch\nx = 1\n"
    assert run(insert_setup, source, Plan(entry=True, already="it makes its process group", spawns=True)) == (source, [])
    assert run(insert_setup, source, Plan(entry=False)) == (source, [])


def test_the_row_says_a_run_without_a_launcher_is_a_group_of_one():
    assert any("group of one" in m for m in messages(insert_setup, "import torch\nx = 1\n"))
