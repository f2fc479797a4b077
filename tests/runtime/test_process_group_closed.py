"""`run` destroys the default process group a script left open when it ends (as torch asks a
script to), so that no rank aborts at interpreter teardown with gloo's threads still holding work."""

import os
import sys

import pytest

LEAVES_A_GROUP_OPEN = '''\
import sys
import torch.distributed as dist

dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
print("open", dist.is_initialized())
if sys.argv[1:] == ["exit"]:
    sys.exit(3)
'''


@pytest.fixture
def runtime_undone():
    """`run` sets TORCHPORT_TARGET and TORCHPORT_LOG for its children, and init_process_group
    wraps sys.excepthook (each line of a traceback prefixed with the rank): not for later tests'."""
    saved, hook = dict(os.environ), sys.excepthook
    yield
    os.environ.clear()
    os.environ.update(saved)
    sys.excepthook = hook
    from torchport import runtime

    runtime.undo()


@pytest.mark.parametrize("arguments, status", [([], 0), (["exit"], 3)], ids=["returns", "sys.exit"])
def test_the_group_a_finished_script_left_open_is_destroyed(cli, tmp_path, runtime_undone, arguments, status):
    import torch.distributed as dist

    script = tmp_path / "train.py"
    script.write_text(LEAVES_A_GROUP_OPEN)
    code, out, _ = cli("run", "--target", "cpu", "--log", tmp_path / "log", script, *arguments)
    assert (code, out.strip()) == (status, "open True")
    assert not dist.is_initialized()


def test_nothing_to_close_is_no_error():
    import torch.distributed as dist

    from torchport.runtime.command import close_process_group

    assert not dist.is_initialized()
    close_process_group()
    assert not dist.is_initialized()
