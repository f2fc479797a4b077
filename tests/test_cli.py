"""The command line: help that explains itself, one-line errors, and no torch for static commands."""

import subprocess
import sys
from pathlib import Path

from torchport.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_top_level_help_lists_every_command(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    for command in ("migrate", "run", "targets"):
        assert command in out


def test_migrate_help_explains_reports_and_exit_codes(capsys):
    try:
        main(["migrate", "--help"])
    except SystemExit as done:
        assert done.code == 0
    out = capsys.readouterr().out
    assert "change_list.csv" in out and "exit status" in out and "--force" in out


def test_targets_command_prints_verdicts(capsys):
    assert main(["targets", "--target", "npu", "--kind", "same"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "torch.cuda.synchronize -> torch.npu.synchronize [same]" in lines
    assert all(line.endswith("[same]") or "[same] " in line for line in lines)


def test_static_commands_never_import_torch(tmp_path):
    code = (
        "import sys; from torchport.cli import main;"
        f"rc = main(['migrate', {str(ROOT / 'examples')!r}, '-o', {str(tmp_path / 'out')!r}, '-t', 'npu', '-q']);"
        "main(['targets']);"
        "assert rc == 0; assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "torchport_report" / "change_list.csv").exists()


def test_a_closed_pipe_ends_the_listing_quietly(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("torchport")
    command = f"'{script}' targets --target cpu | head -1"
    for _ in range(5):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_run_help_names_every_target_auto_tries_in_its_order(cli):
    """`--target auto` picks the first available of the targets marked `auto` (discovered, so a
    vendor's target is among them): the help says which, read from the same list."""
    from torchport import targets

    status, out, _ = cli("run", "--help")
    assert status == 0
    said = " ".join(out.split())
    assert f"the first available of {', '.join(targets.auto_order())}, else cpu" in said
    assert "cuda" in targets.auto_order()
