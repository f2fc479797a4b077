"""analyze writes no tree: a file it cannot read is "not migrated", never "copied unchanged"."""

import csv
from pathlib import Path


def test_a_file_analyze_cannot_read_is_listed_without_a_copy_it_did_not_make(cli, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "broken.py").write_text("import torch\nx = torch.ones(2).cuda(\n")
    code, _, err = cli("analyze", src, "-o", tmp_path / "out", "-t", "npu")
    assert code == 0, err
    with (tmp_path / "out" / "torchport_report" / "skipped_files.csv").open(newline="") as handle:
        reasons = {row[0]: row[-1] for row in list(csv.reader(handle))[1:]}
    assert reasons["broken.py"].startswith("not migrated: "), reasons
    assert "copied" not in reasons["broken.py"]
