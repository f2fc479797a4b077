"""[tool.torchport] in pyproject.toml: found from SRC upwards, mapped onto any command's options by
their dests, the command line over it, bad keys and values said in one line naming file and key."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from torchport import config as configuration
from torchport.errors import UsageError
from torchport.migrate.command import _jobs

CUDA = "import torch\nx = torch.zeros(2).cuda()\n"


def _codes(text: str) -> list[str]:
    codes = [code.strip() for code in text.split(",") if code.strip()]
    if not all(code.startswith("TP") for code in codes):
        raise UsageError(f"{text!r} is no rule code")  # (as migrate/selection.py's type says it)
    return codes


def _parser() -> argparse.ArgumentParser:
    """A command with every option a key sets, in the shapes a command may give them: extended by
    a comma-separated list, repeated or not (select, as migrate/selection.py has it), repeated
    (ignore, exclude), one option taking many (extend-select), one value, comma-separated (include)."""
    parser = argparse.ArgumentParser(prog="torchport fake")
    parser.add_argument("src", type=Path, nargs="+")
    parser.add_argument("-t", "--target", choices=["npu", "cpu"], default="npu")
    parser.add_argument("--select", type=_codes, action="extend")
    parser.add_argument("--ignore", action="append", default=[])
    parser.add_argument("--extend-select", nargs="+", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--include", type=_codes, default=None)
    parser.add_argument("--apply-affinity", action="store_true")
    parser.add_argument("-j", "--jobs", type=_jobs, default=1)
    configuration.add_argument(parser)
    return parser


def _project(root: Path, table: str, name: str = "pyproject.toml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(table)
    (root / "train.py").write_text(CUDA)
    return root


FULL = """\
[project]
name = "trainer"

[tool.torchport]
target = "cpu"
select = ["TP0", "TP11"]
ignore = ["TP003"]
extend-select = ["TP2"]
exclude = ["tests/*"]
include = ["TP5", "TP6"]
apply-affinity = true
jobs = 4
"""


def _applied(argv: list[str]) -> argparse.Namespace:
    parser = _parser()
    args = parser.parse_args(argv)
    configuration.apply(args, parser, argv)
    return args


def test_each_key_sets_its_option_as_the_command_line_would(tmp_path):
    project = _project(tmp_path / "trainer", FULL)
    args = _applied([str(project / "train.py")])
    assert args.target == "cpu"
    assert args.select == ["TP0", "TP11"]  # each through the option's type, then extended
    assert args.ignore == ["TP003"] and args.extend_select == ["TP2"] and args.exclude == ["tests/*"]
    assert args.include == ["TP5", "TP6"]  # one value: the list joined with commas, then its type
    assert args.apply_affinity is True and args.jobs == 4


def test_the_command_line_wins_even_when_it_gives_the_default(tmp_path):
    project = _project(tmp_path / "trainer", FULL)
    args = _applied([str(project), "--target", "npu", "--exclude", "docs", "-j1", "--select", "TP1,TP2"])
    assert args.target == "npu"  # npu is the default: given, it still wins
    assert args.exclude == ["docs"]  # replaced, not added to
    assert args.jobs == 1 and args.select == ["TP1", "TP2"]
    assert args.ignore == ["TP003"] and args.apply_affinity is True  # the keys not given


def test_the_nearest_pyproject_with_a_table_is_read_from_src_upwards(tmp_path):
    _project(tmp_path / "repo", '[tool.torchport]\ntarget = "cpu"\n')
    _project(tmp_path / "repo" / "sub", '[project]\nname = "sub"\n')  # no table: looked past
    deep = tmp_path / "repo" / "sub" / "pkg"
    deep.mkdir()
    assert configuration.for_args(argparse.Namespace(src=[deep])).path == tmp_path / "repo" / "pyproject.toml"
    assert _applied([str(deep)]).target == "cpu"
    assert configuration.for_args(argparse.Namespace(src=[tmp_path])).path is None


def test_a_command_that_reads_no_src_takes_no_setting(cli, tmp_path, monkeypatch):
    """`run --target` is where a script runs now: a project's migration target must not move it."""
    _project(tmp_path / "p", '[tool.torchport]\ntarget = "cpu"\n')
    monkeypatch.chdir(tmp_path / "p")
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--target", default="auto")
    args = parser.parse_args(["train.py"])
    configuration.apply(args, parser, ["train.py"])
    assert args.target == "auto"
    status, _, err = cli("targets", "--config", "pyproject.toml")
    assert status == 2 and "usage: torchport targets" in err and "unrecognized arguments: --config" in err


def test_a_value_the_options_type_refuses_names_the_file_and_the_key(tmp_path):
    project = _project(tmp_path / "p", '[tool.torchport]\nselect = ["TP0", "E501"]\n')
    with pytest.raises(UsageError) as refused:
        _applied([str(project)])
    assert str(refused.value) == f"{project / 'pyproject.toml'}: [tool.torchport] select: 'E501' is no rule code"


def test_a_key_no_option_of_the_command_takes_is_left_to_the_others(tmp_path):
    project = _project(tmp_path / "p", '[tool.torchport]\ninclude = ["*.py"]\ntarget = "cpu"\n')
    parser = argparse.ArgumentParser()
    parser.add_argument("src", nargs="+")
    parser.add_argument("--target")
    args = parser.parse_args([str(project)])
    configuration.apply(args, parser, [str(project)])
    assert args.target == "cpu" and not hasattr(args, "include")


def test_migrate_takes_its_target_from_pyproject_and_the_command_line_over_it(cli, tmp_path):
    project = _project(tmp_path / "p", '[tool.torchport]\ntarget = "xpu"\n')
    status, out, err = cli("migrate", project, "--diff")
    assert status == 0, err
    assert "torchport migrate [xpu]" in err and "x = torch.zeros(2).xpu()" in out
    status, out, err = cli("migrate", project, "--diff", "-t", "npu")
    assert "torchport migrate [npu]" in err


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('tarket = "cpu"', "[tool.torchport] tarket: unknown key (known: target, from, select,"),
        ("extend_select = []", "[tool.torchport] extend_select: unknown key (spelled extend-select)"),
        ('jobs = "many"', "[tool.torchport] jobs: 'many' is not a number of processes (0 or more)"),
        ("jobs = -1", "[tool.torchport] jobs: '-1' is not a number of processes (0 or more)"),
        ('target = "gpu"', "[tool.torchport] target: 'gpu' is not one of cuda, npu, xpu, mps, cpu, accelerator"),
        ('apply-affinity = "yes"', "[tool.torchport] apply-affinity: 'yes' is not true or false"),
        ("exclude = [{ a = 1 }]", "[tool.torchport] exclude: {'a': 1} is not a string or a number"),
        ("target = ", "not valid TOML (Invalid value (at line 2, column 10))"),
    ],
    ids=["unknown key", "underscore", "not a number", "negative", "no such target", "not a bool", "a table", "not TOML"],
)
def test_a_bad_key_or_value_is_one_line_naming_the_file_and_the_key(cli, tmp_path, table, said):
    project = _project(tmp_path / "p", f"[tool.torchport]\n{table}\n")
    status, out, err = cli("migrate", project, "--diff")
    assert status == 2 and out == ""
    assert err.startswith(f"torchport migrate: error: {project / 'pyproject.toml'}: {said}")
    assert err.count("\n") == 1


def test_config_names_a_file_of_its_own(cli, tmp_path):
    project = _project(tmp_path / "p", '[tool.torchport]\ntarget = "xpu"\n')
    own = tmp_path / "ci.toml"
    own.write_text('target = "cpu"\n')  # (not a pyproject.toml: its top level holds the keys)
    status, _, err = cli("migrate", project, "--diff", "--config", own)
    assert status == 0 and "torchport migrate [cpu]" in err
    status, _, err = cli("migrate", project, "--diff", "--config", tmp_path / "missing.toml")
    assert status == 2 and err == f"torchport migrate: error: --config {tmp_path / 'missing.toml'}: no such file\n"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    status, _, err = cli("migrate", project, "--diff", "--config", tmp_path / "other" / "pyproject.toml")
    assert status == 2 and "it has no [tool.torchport] table" in err


def test_torchport_config_prints_each_setting_and_where_it_comes_from(cli, tmp_path):
    project = _project(tmp_path / "p", '[tool.torchport]\ntarget = "cpu"\nexclude = ["a", "b"]\n')
    status, out, err = cli("config", project)
    assert status == 0, err
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert out.splitlines()[0] == f"config: {project / 'pyproject.toml'} [tool.torchport]"
    assert lines["target"].split()[1:3] == ["cpu", str(project / "pyproject.toml")]
    assert lines["exclude"].split()[1:4] == ["a,", "b", str(project / "pyproject.toml")]
    assert lines["jobs"].split()[1:3] == ["1", "default"]
    assert "migrate" in lines["apply-affinity"]
    assert set(lines) == set(configuration.KEYS)
