"""The same knowledge read the other way: what `migrate --target npu` wrote (the goldens' npu
outputs), read back into CUDA's dialect, migrates to the CPU exactly as the CUDA original does."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchport import targets
from torchport.migrate import migrate_source
from torchport.npu_to_cuda.driver import convert_source

EXPECTED = Path(__file__).resolve().parents[1] / "migrate" / "golden" / "expected"
CPU = targets.get("cpu")


@pytest.mark.parametrize("name", ["amp", "cuda_api", "device_strings", "distributed", "streams_syncbn"])
def test_the_npu_port_of_a_golden_file_reads_back_and_migrates_as_the_original(name):
    npu = (EXPECTED / f"{name}.npu.py").read_text(encoding="utf-8")
    back = convert_source(npu, f"{name}.py", CPU)
    assert back.changed and "torch_npu" not in back.source
    migrated = migrate_source(back.source.encode("utf-8"), CPU, f"{name}.py").source
    expected = (EXPECTED / f"{name}.cpu.py").read_text(encoding="utf-8")
    assert (migrated.decode("utf-8") if isinstance(migrated, bytes) else migrated) == expected
