"""A `.cuda()` row shows the call as it was written: arguments only where it had some."""

from torchport import targets
from torchport.migrate import migrate_source

SOURCE = b"import torch\nx = torch.ones(2).cuda()\ny = torch.ones(2).cuda(0)\nz = torch.ones(2).cuda(non_blocking=True)\n"


def test_the_row_of_a_call_without_arguments_shows_none():
    result = migrate_source(SOURCE, targets.get("npu"), "train.py")
    messages = {f.start_line: f.message for f in result.findings if f.code == "TP003"}
    assert messages == {2: "replace .cuda() with .npu()", 3: "replace .cuda(...) with .npu(...)",
                        4: "replace .cuda(...) with .npu(...)"}
