"""Each report code ("TP201") is typed once in src/torchport, where it is declared; everything else
names the declaration. The dicts made from the declarations hold what they held when they were
written out by hand, in the same order (the terminal summary, the report and SARIF read them)."""

import ast
import re
from collections import Counter
from pathlib import Path

from torchport.apex_to_torch.changes import CODES as APEX_CODES
from torchport.distribute.changes import CODES as DISTRIBUTE_CODES, SUBJECTS as DISTRIBUTE_SUBJECTS
from torchport.mixed_precision.changes import CODES as AMP_CODES, SUBJECTS as AMP_SUBJECTS
from torchport.npu_to_cuda.changes import CODES as NPU_CODES

SRC = Path(__file__).resolve().parents[1] / "src" / "torchport"
_CODE = re.compile(r"TP\d{3}")


def _typed_codes() -> Counter:
    """How many times each code stands as a string constant in torchport's source (docstrings and
    comments aside: only a whole constant that is a code counts)."""
    found = Counter()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CODE.fullmatch(node.value):
                found[node.value] += 1
    return found


def test_each_code_is_typed_once():
    typed = _typed_codes()
    assert typed, "no codes found: the scan reads nothing"
    assert {code: n for code, n in typed.items() if n > 1} == {}


def test_the_distributed_codes_are_unchanged():
    assert list(DISTRIBUTE_CODES.items()) == [
        ("TP201", "distributed: process group and device of each process"),
        ("TP202", "distributed: a DistributedSampler on the training loaders"),
        ("TP203", "distributed: the model wrapped in DistributedDataParallel"),
        ("TP204", "distributed: processes started by the launcher, not mp.spawn"),
        ("TP205", "distributed: rank 0 alone saves and prints"),
        ("TP206", "distributed: batch size and learning rate across processes"),
        ("TP200", "distributed: files left as they were"),
    ]
    assert list(DISTRIBUTE_SUBJECTS.items()) == [
        ("TP200", "--distributed"),
        ("TP201", "process group"),
        ("TP202", "DistributedSampler"),
        ("TP203", "DistributedDataParallel"),
        ("TP204", "mp.spawn"),
        ("TP205", "rank 0"),
        ("TP206", "batch size"),
    ]


def test_the_apex_codes_are_unchanged():
    assert list(APEX_CODES.items()) == [
        ("TP301", "apex: amp.initialize -> autocast and a GradScaler"),
        ("TP302", "apex: scale_loss and the optimizer step -> the GradScaler's"),
        ("TP303", "apex: master_params and amp state in checkpoints -> the optimizer's and the scaler's"),
        ("TP304", "apex: fused optimizers -> torchport.optim"),
        ("TP305", "apex: parallel (DistributedDataParallel, SyncBatchNorm) -> torch's"),
        ("TP306", "apex: fused normalization -> torch.nn"),
        ("TP307", "apex: the stand-in package, where a form has no confident rewrite"),
        ("TP300", "apex: uses left as they were"),
    ]


def test_the_npu_codes_are_unchanged():
    assert list(NPU_CODES.items()) == [
        ("TP401", "from the NPU: torch_npu imports removed (transfer_to_npu's file is CUDA code)"),
        ("TP402", "from the NPU: torch.npu / torch_npu.npu APIs -> torch.cuda"),
        ("TP403", "from the NPU: x.npu() and x.is_npu -> x.cuda() and x.is_cuda"),
        ("TP404", "from the NPU: device strings -> CUDA's"),
        ("TP405", "from the NPU: hccl -> nccl"),
        ("TP406", "from the NPU: ASCEND_RT_VISIBLE_DEVICES -> CUDA_VISIBLE_DEVICES"),
        ("TP407", "from the NPU: NPU-only tuning dropped"),
        ("TP408", "from the NPU: NpuFused optimizers -> torch.optim or torchport.optim"),
        ("TP409", "from the NPU: torch_npu.npu_* kernels -> their torch computation"),
        ("TP410", "from the NPU: torch_npu.profiler -> torch.profiler"),
        ("TP411", "from the NPU: int32 class labels -> int64 where a loss reads them"),
        ("TP412", "from the NPU: a view of a comparison's result -> reshape (contiguous on the NPU alone)"),
        ("TP400", "from the NPU: uses left as they were"),
    ]


def test_the_amp_codes_are_unchanged():
    assert list(AMP_CODES.items()) == [
        ("TP501", "amp: a training step's backward and step under loss scaling (its forward under autocast, "
                  "or apex's O2 model)"),
        ("TP502", "amp: the loss scaler (or amp.initialize) where the optimizer is made"),
        ("TP503", "amp: the scaler's state saved beside the optimizer's"),
        ("TP500", "amp: training steps left in float32, and why"),
    ]
    assert list(AMP_SUBJECTS.items()) == [
        ("TP500", "--amp"), ("TP501", "autocast"), ("TP502", "GradScaler"), ("TP503", "checkpoint")]
