"""`torchport migrate` safety, through the real command line.

The input tree is never written; OUT is checked before anything is written; files that cannot
be migrated are copied unchanged and listed; links are not followed out of the input; a second
migration changes nothing; exit statuses and report columns are exactly as documented.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from _trees import snapshot

from _ported import PORTED

from torchport import targets
from torchport.migrate import migrate_source
from torchport.migrate.rules import RULES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGETS = PORTED  # (on cuda nothing changes: nothing to check the writing of)
REPORT = "torchport_report"
CHANGE_COLUMNS = ["File", "Start Line", "End Line", "Operation Type", "Message", "Rule"]
API_COLUMNS = ["File", "Start Line", "End Line", "OP", "Tips"]

# A file with something for most rules to do (each rule's own sample is declared on its class).
RICH = '''\
import os
import time
import torch
import torch.distributed as dist
import torch.cuda
from torch.cuda.amp import autocast, GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
torch.backends.cudnn.benchmark = True


@torch.cuda.amp.custom_fwd
def forward(ctx, x):
    return x


@torch.cuda.amp.custom_bwd(cast_inputs=torch.float16)
def backward(ctx, grad):
    return grad


def train(rank, model, batch, loader, i):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    fallback = "cuda" if torch.cuda.is_available() else "cpu"
    names = [torch.device("cuda:0"), f"cuda:{rank}", "cuda:%d" % i, "cuda:{}".format(i), "cuda:" + str(i)]
    torch.cuda.set_device(rank)
    torch.cuda.manual_seed_all(0)
    dist.init_process_group(backend="nccl")
    dist.init_process_group(dist.Backend.NCCL)
    model = model.cuda()
    model = model.cuda(rank)
    batch = batch.cuda(non_blocking=True)
    ones = torch.ones(2).cuda()
    x = torch.zeros(3, device="cuda")
    y = x.to("cuda:1")
    on_gpu = x.is_cuda and batch.is_cuda and device.type == "cuda"
    batch.record_stream(torch.cuda.current_stream())
    pinned = batch.pin_memory()
    labels = batch.type(torch.cuda.LongTensor)
    cuda_build = torch.version.cuda
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    z = x.to(0)
    w = torch.zeros(2, device=0)
    model = DDP(model, device_ids=[rank], output_device=rank)
    other = DDP(model, device_ids=[0, 1], output_device=0)
    scaler = GradScaler()
    scaler2 = torch.cuda.amp.GradScaler(init_scale=2.0**16)
    for inputs in loader:
        with autocast():
            loss = model(inputs)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(inputs)
        scaler.scale(loss).backward()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    y = x * 2
    end.record()
    end.synchronize()
    elapsed = start.elapsed_time(end)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    peak = torch.cuda.max_memory_allocated()
    name = torch.cuda.get_device_name(0)
    count = torch.cuda.device_count()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        if not on_gpu:
            print("WARNING: You have a CUDA device, so you should probably run with --cuda")
    state = torch.load("ckpt.pt", map_location="cuda:0")
    last = torch.load("last.pt")
    print("saved to cuda_best.pt on cuda")
    return device, fallback, names, on_gpu, batch, ones, y, z, w, other, scaler2, elapsed, peak, name, count, state, last
'''
UNSUPPORTED_ON_CPU = "import torch\n\ngraphed = torch.cuda.make_graphed_callables(model, (x,))\n"
UNKNOWN = "import torch\n\nweird = torch.cuda.not_a_real_api()\n"


# --- helpers ------------------------------------------------------------------------------


def files_of(root: Path, skip_reports: bool = True) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file (not the reports)."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if skip_reports and relative.parts[0] == REPORT:
            continue
        if path.is_file() and not path.is_symlink():
            found[str(relative)] = path.read_bytes()
    return found


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def skipped(out: Path) -> dict[str, str]:
    rows = read_csv(out / REPORT / "skipped_files.csv")
    assert rows[0] == ["File", "Reason"]
    return {file: reason for file, reason in rows[1:]}


def summary(out: Path) -> dict:
    return json.loads((out / REPORT / "summary.json").read_text(encoding="utf-8"))


def assert_one_line_error(status: int, err: str, *words: str) -> None:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("torchport migrate: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], err


# --- the input tree -----------------------------------------------------------------------

LATIN1 = b'# -*- coding: latin-1 -*-\nimport torch\nlabel = "caf\xe9 cr\xe8me"\ndevice = "cuda:0"\n'
BOM = b'\xef\xbb\xbfimport torch\n\nlabel = "caf\xc3\xa9"\nmodel = torch.nn.Linear(2, 2).cuda()\n'
UNPARSABLE = {
    "legacy/py2.py": b'import torch\nprint "running on cuda"\nx = torch.zeros(1).cuda()\n',
    "legacy/broken.py": b"import torch\nx = torch.zeros(1).cuda(\ny = 1\n",
    "legacy/not_utf8.py": b'import torch\n# d\xe9j\xe0 vu\ndevice = "cuda"\n',
}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "lib").mkdir(parents=True)
    (folder / "secret.py").write_text('import torch\nkey = "cuda"\n')
    (folder / "lib" / "helper.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    return folder


@pytest.fixture
def src(tmp_path: Path, outside: Path) -> Path:
    """A messy project: nested packages, odd encodings, code that does not parse, binaries, links."""
    root = tmp_path / "project"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "legacy").mkdir()
    (root / "train.py").write_text(RICH)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pkg" / "sub" / "model.py").write_text(
        "import torch\n\n\ndef build():\n    return torch.nn.Linear(4, 2).cuda()\n"
    )
    (root / "pkg" / "sub" / "cpu_only.py").write_text(UNSUPPORTED_ON_CPU + UNKNOWN)
    (root / "latin1.py").write_bytes(LATIN1)
    (root / "bom.py").write_bytes(BOM)
    (root / "crlf.py").write_bytes(b"import torch\r\n\r\nx = torch.zeros(1)\r\ny = x.cuda()  # move\r\n")
    for name, data in UNPARSABLE.items():
        (root / name).write_bytes(data)
    (root / "data" / "weights.bin").write_bytes(bytes(range(256)) * 4 + b"cuda\x00nccl\xff")
    (root / "data" / "config.yaml").write_text("device: cuda:0\nbackend: nccl\n")
    (root / "README.md").write_text("Run `python train.py` on CUDA.\n")
    script = root / "run.py"
    script.write_text('#!/usr/bin/env python\nimport torch\nprint(torch.zeros(1, device="cuda"))\n')
    script.chmod(0o755)
    (root / "run.sh").write_text("#!/bin/sh\nOMP_NUM_THREADS=1 python train.py\n")  # (no setting: copied as it is)
    (root / "run.sh").chmod(0o755)
    os.symlink(outside / "secret.py", root / "link_out.py")
    os.symlink(outside / "lib", root / "linked_lib")
    os.symlink(root / "pkg" / "util.py", root / "link_in.py")
    os.symlink(root / "does_not_exist.py", root / "dangling.py")
    return root


def expected_skips() -> set[str]:
    return {"link_out.py", "linked_lib", "dangling.py", *UNPARSABLE}


# --- SRC is never written -----------------------------------------------------------------


# each target once, each way of running once
WAYS = {"npu": [], "xpu": ["-j", "2"], "mps": ["--diff"], "cpu": ["--strict"], "accelerator": ["--force", "-q"]}


@pytest.mark.parametrize("target", TARGETS)
def test_input_tree_is_never_written(cli, src: Path, outside: Path, tmp_path: Path, target: str) -> None:
    before, before_outside = snapshot(src), snapshot(outside)
    out = tmp_path / "out"
    extra = WAYS.get(target, [])
    written = [] if "--diff" in extra else ["-o", out]  # (--diff with -o is refused)
    status, _, err = cli("migrate", src, *written, "--target", target, *extra)
    assert status == (1 if "--strict" in extra else 0), err
    assert snapshot(src) == before
    assert snapshot(outside) == before_outside
    if "--diff" in extra:
        assert not out.exists()
    else:
        assert files_of(out)["train.py"] != (src / "train.py").read_bytes()  # it did migrate
@pytest.mark.parametrize("where", [".", "out", "pkg/sub/out", "pkg"])
@pytest.mark.parametrize("force", [False, True])
def test_out_equal_to_or_inside_src_is_refused(cli, src: Path, where: str, force: bool) -> None:
    before = snapshot(src)
    out = src / where
    existed = out.exists()
    status, stdout, err = cli("migrate", src, "-o", out, *(["--force"] if force else []))
    assert_one_line_error(status, err, "inside the input")
    assert stdout == ""
    assert out.exists() == existed
    assert snapshot(src) == before


@pytest.mark.parametrize("force", [False, True])
def test_out_containing_src_is_refused(cli, tmp_path: Path, force: bool) -> None:
    src = tmp_path / "a" / "b" / "project"
    src.mkdir(parents=True)
    (src / "train.py").write_text(RICH)
    before = snapshot(tmp_path)
    for out in (tmp_path / "a", tmp_path / "a" / "b", tmp_path):
        status, _, err = cli("migrate", src, "-o", out, *(["--force"] if force else []))
        assert_one_line_error(status, err, "contains the input")
    # a single file: its own folder (OUT/train.py would be the input) and any folder above it
    for out in (src, src.parent):
        status, _, err = cli("migrate", src / "train.py", "-o", out, "--force")
        assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert snapshot(tmp_path) == before


def test_single_file_into_a_new_folder_beside_it(cli, tmp_path: Path) -> None:
    """`torchport migrate train.py -o ported` (the example in `torchport --help`) works."""
    (tmp_path / "train.py").write_text(RICH)
    before = snapshot(tmp_path)
    status, _, err = cli("migrate", tmp_path / "train.py", "-o", tmp_path / "ported", "-t", "cpu")
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "ported").iterdir()) == [REPORT, "train.py"]
    assert '"cpu"' in (tmp_path / "ported" / "train.py").read_text()
    after = snapshot(tmp_path)
    assert after["train.py"] == before["train.py"]


def test_non_empty_out_needs_force_and_force_deletes_nothing(cli, src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "pkg").mkdir(parents=True)
    (out / "notes.txt").write_text("mine\n")
    (out / "pkg" / "extra.py").write_text("import torch\nkeep = 'cuda'\n")
    (out / "train.py").write_text("stale\n")
    before = snapshot(out)

    status, stdout, err = cli("migrate", src, "-o", out)
    assert_one_line_error(status, err, "not empty", "--force")
    assert snapshot(out) == before

    status, _, err = cli("migrate", src, "-o", out, "--force", "-t", "xpu")
    assert status == 0, err
    assert (out / "notes.txt").read_text() == "mine\n"
    assert (out / "pkg" / "extra.py").read_text() == "import torch\nkeep = 'cuda'\n"  # not migrated either
    assert "xpu" in (out / "train.py").read_text()  # the migrated file replaced the stale one
    assert (out / REPORT / "summary.json").exists()


def test_force_never_writes_through_links_in_out(cli, src: Path, tmp_path: Path) -> None:
    """A link in OUT that leads back into SRC (or out of OUT) is not written through."""
    before = snapshot(src)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(src / "train.py", out / "train.py")
    os.symlink(src / "pkg", out / "pkg")
    os.symlink(src / "data", out / "data")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "legacy")
    os.link(src / "bom.py", out / "bom.py")  # hard links (`cp -al`): replaced, never written into
    os.link(src / "README.md", out / "README.md")
    status, _, err = cli("migrate", src, "-o", out, "--force", "-t", "cpu")
    assert status == 0, err
    assert snapshot(src) == before
    assert list(elsewhere.iterdir()) == []
    reasons = skipped(out)
    for name in ("train.py", "pkg/util.py", "pkg/sub/model.py", "data/weights.bin", "legacy/py2.py"):
        assert "link" in reasons[name], reasons
    assert b".cpu()" in (out / "bom.py").read_bytes()  # the rest was written
    assert not (out / "bom.py").samefile(src / "bom.py")
    assert not (out / "README.md").samefile(src / "README.md")
    assert (out / "README.md").read_bytes() == (src / "README.md").read_bytes()
    assert not [p for p in out.rglob("*") if p.name.startswith(".torchport-")]  # no temporary left


def test_out_reached_through_a_link_into_src_is_refused(cli, src: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(src, alias)
    before = snapshot(src)
    status, _, err = cli("migrate", src, "-o", alias / "out")
    assert_one_line_error(status, err, "inside the input")
    status, _, err = cli("migrate", alias, "-o", src / "out")
    assert_one_line_error(status, err, "inside the input")
    assert snapshot(src) == before


def test_report_folder_that_is_a_link_is_refused(cli, src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(src / "pkg", out / REPORT)
    before = snapshot(src)
    status, _, err = cli("migrate", src, "-o", out, "--force")
    assert_one_line_error(status, err, REPORT)
    assert snapshot(src) == before


def test_missing_src(torchport, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = torchport("migrate", tmp_path / "nope", "-o", out)
    assert_one_line_error(result.returncode, result.stderr, "no such file or directory")
    assert result.stdout == ""
    assert not out.exists()


def test_out_that_cannot_be_created(torchport, src: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    result = torchport("migrate", src, "-o", blocker / "sub")
    assert_one_line_error(result.returncode, result.stderr, "cannot create the output")
    result = torchport("migrate", src, "-o", blocker)
    assert_one_line_error(result.returncode, result.stderr, "not a folder")


# --- what is migrated, copied and left out --------------------------------------------------


@pytest.fixture
def migrated(cli, src: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    status, stdout, err = cli("migrate", src, "-o", out, "--target", "npu")
    assert status == 0, err
    assert "Traceback" not in err
    return out


def test_unparsable_files_are_copied_unchanged_and_listed(src: Path, migrated: Path) -> None:
    reasons = skipped(migrated)
    for name, data in UNPARSABLE.items():
        assert (migrated / name).read_bytes() == data
        assert reasons[name].startswith("not migrated, copied unchanged: ")
        assert len(reasons[name]) > len("not migrated, copied unchanged: ")
    assert "UnicodeDecodeError" in reasons["legacy/not_utf8.py"]
    # and the run went on
    assert "torch_npu" in (migrated / "train.py").read_text()
    assert ".npu()" in (migrated / "pkg" / "sub" / "model.py").read_text()
    names = set(summary(migrated)["skipped"][i]["file"] for i in range(len(summary(migrated)["skipped"])))
    assert names == set(reasons) == expected_skips()


def test_bom_file_is_migrated_and_keeps_its_bom(migrated: Path) -> None:
    data = (migrated / "bom.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport torch\n")
    assert data.count(b"\xef\xbb\xbf") == 1
    assert b".npu()" in data and b".cuda()" not in data
    assert "caf\u00e9" in data.decode("utf-8-sig")
    assert "bom.py" not in skipped(migrated)


def test_latin1_file_with_cookie_is_migrated_and_stays_latin1(migrated: Path) -> None:
    data = (migrated / "latin1.py").read_bytes()
    assert data.startswith(b"# -*- coding: latin-1 -*-\n")
    assert b'"caf\xe9 cr\xe8me"' in data  # latin-1 bytes, not UTF-8
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert '"npu:0"' in data.decode("latin-1")
    compile(data, "latin1.py", "exec")
    assert "latin1.py" not in skipped(migrated)


def test_line_endings_are_kept(migrated: Path) -> None:
    data = (migrated / "crlf.py").read_bytes()
    assert b"y = x.npu()  # move\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")


def test_links_are_not_followed(migrated: Path, outside: Path) -> None:
    reasons = skipped(migrated)
    assert not os.path.lexists(migrated / "link_out.py")
    assert not os.path.lexists(migrated / "linked_lib")
    assert not os.path.lexists(migrated / "dangling.py")
    assert "not followed" in reasons["link_out.py"]
    assert "not followed" in reasons["linked_lib"]
    assert "not followed" in reasons["dangling.py"]
    # nothing from outside made it in, by any name
    secret = (outside / "secret.py").read_bytes()
    assert all(data != secret for data in files_of(migrated).values())
    # a link to a file inside the input is made again, as a relative link to the migrated file
    assert (migrated / "link_in.py").is_symlink() and not os.path.isabs(os.readlink(migrated / "link_in.py"))
    assert (migrated / "link_in.py").resolve() == (migrated / "pkg" / "util.py").resolve()
    assert (migrated / "link_in.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_layout_is_kept_and_other_files_copied_unchanged(src: Path, migrated: Path) -> None:
    source = files_of(src)
    output = files_of(migrated)
    links = {"link_out.py", "linked_lib", "dangling.py", "link_in.py"}
    assert set(output) == {name for name in source if name.split("/")[0] not in links}
    for name, data in source.items():
        if not name.endswith(".py"):
            assert output[name] == data, name
            assert (migrated / name).stat().st_mtime_ns == (src / name).stat().st_mtime_ns
    assert output["data/weights.bin"] == (src / "data" / "weights.bin").read_bytes()
    assert output["pkg/util.py"] == source["pkg/util.py"]  # no CUDA: byte for byte
    assert output["pkg/__init__.py"] == b""
    for name in ("run.sh", "run.py"):  # an executable stays executable, migrated or not
        assert os.access(migrated / name, os.X_OK), name
    assert '"npu"' in output["run.py"].decode()


def test_fifo_is_not_read(torchport, tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    src = tmp_path / "project"
    src.mkdir()
    (src / "train.py").write_text(RICH)
    os.mkfifo(src / "pipe.py")
    os.mkfifo(src / "pipe")
    result = torchport("migrate", src, "-o", tmp_path / "out", "-t", "cpu", timeout=60)
    assert result.returncode == 0, result.stderr
    reasons = skipped(tmp_path / "out")
    assert "not a regular file" in reasons["pipe.py"] and "not a regular file" in reasons["pipe"]
    assert not os.path.lexists(tmp_path / "out" / "pipe.py")


# --- idempotence ----------------------------------------------------------------------------


def _migrate_twice(cli, src: Path, tmp_path: Path, target: str) -> tuple[Path, Path]:
    first, second = tmp_path / f"{target}_1", tmp_path / f"{target}_2"
    status, _, err = cli("migrate", src, "-o", first, "--target", target, "-j", "2")
    assert status == 0, err
    status, _, err = cli("migrate", first, "-o", second, "--target", target, "-j", "2")
    assert status == 0, err
    return first, second


@pytest.mark.parametrize("target", TARGETS)
def test_migrating_the_examples_again_changes_nothing(cli, tmp_path: Path, target: str) -> None:
    first, second = _migrate_twice(cli, EXAMPLES, tmp_path, target)
    assert files_of(first) != files_of(EXAMPLES)
    assert files_of(second) == files_of(first)
    assert summary(first)["files_changed"] == summary(first)["python_files"]  # every example uses CUDA
    assert summary(second)["files_changed"] == 0
    assert summary(second)["changes"] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_migrating_a_rich_file_again_changes_nothing(cli, tmp_path: Path, target: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(RICH)
    first, second = _migrate_twice(cli, src, tmp_path, target)
    compile((first / "train.py").read_bytes(), "train.py", "exec")
    assert {"TP001", "TP002", "TP003", "TP004", "TP005", "TP006"} <= set(summary(first)["changes_by_rule"])
    assert files_of(second) == files_of(first)
    assert summary(second)["changes"] == 0


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_each_rules_own_sample_sets_it_off_and_migrates_once_for_all(rule) -> None:
    """Every rule declares a sample (on its class: a new rule brings its own); migrated to each
    target it compiles, the rule has something to say on at least one, and a second migration
    changes nothing."""
    said_on = []
    for name in TARGETS:
        target = targets.get(name)
        first = migrate_source(rule.sample.encode(), target, "sample.py")
        assert first.error is None, (name, first.error)
        if any(f.code == rule.code for f in first.findings):
            said_on.append(name)
        second = migrate_source(first.source, target, "sample.py")
        assert second.source == first.source, name
        assert not [f for f in second.findings if f.operation.is_change], name
    assert said_on, f"{rule.code}'s sample sets it off on no target"


# --- exit statuses ------------------------------------------------------------------------


def test_exit_statuses(cli, torchport, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "train.py").write_text(RICH)
    unsupported = tmp_path / "unsupported"
    unsupported.mkdir()
    (unsupported / "props.py").write_text(UNSUPPORTED_ON_CPU)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "ok.py").write_text(RICH)
    (broken / "py2.py").write_bytes(UNPARSABLE["legacy/py2.py"])

    def status(src: Path, *extra: str) -> int:
        code, _, err = cli("migrate", src, "--diff", *extra)
        assert "Traceback" not in err, err
        return code

    assert status(clean, "-t", "npu") == 0
    assert status(clean, "-t", "npu", "--strict") == 0
    assert status(unsupported, "-t", "cpu") == 0
    assert status(unsupported, "-t", "npu", "--strict") == 0  # NPU has it
    assert status(broken, "-t", "npu") == 0
    assert status(broken, "-t", "npu", "--strict") == 1
    # the same from the installed command, when writing
    result = torchport("migrate", unsupported, "-o", tmp_path / "o1", "-t", "cpu", "--strict")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "o1" / "props.py").exists() and (tmp_path / "o1" / REPORT / "summary.json").exists()

    bad_target = torchport("migrate", clean, "-o", tmp_path / "o2", "--target", "tpu")
    assert bad_target.returncode == 2
    assert "invalid choice" in bad_target.stderr and "Traceback" not in bad_target.stderr
    assert not (tmp_path / "o2").exists()
    for jobs in ("two", "-3"):
        code, _, err = cli("migrate", clean, "-o", tmp_path / "o3", "-j", jobs)
        assert code == 2 and "is not a number of processes" in err
    code, _, err = cli("migrate", clean)
    assert_one_line_error(code, err, "-o OUT")
    assert not (tmp_path / "o3").exists()


def test_messy_tree_as_a_process_has_no_traceback(torchport, src: Path, tmp_path: Path) -> None:
    result = torchport("migrate", src, "-o", tmp_path / "out", "-t", "accelerator", "-j", "2")
    assert result.returncode == 0
    assert all(line.startswith("torchport: ") for line in result.stderr.splitlines()), result.stderr  # (progress, piped: a slow machine)
    assert "skipped files" in result.stdout
    result = torchport("migrate", src, "-o", tmp_path / "out2", "-t", "cpu", "--strict", "-q")
    assert result.returncode == 1
    assert result.stdout == "" and result.stderr == ""


# --- --diff, reports, -j --------------------------------------------------------------------


def test_diff_writes_nothing_and_prints_a_unified_diff(cli, src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = snapshot(src)
    status, stdout, err = cli("migrate", src, "--diff", "-t", "xpu")
    assert status == 0, err
    assert not out.exists()
    assert snapshot(src) == before
    assert "--- a/train.py\n+++ b/train.py\n" in stdout
    assert "--- a/latin1.py\n+++ b/latin1.py\n" in stdout
    assert '+label = "caf\u00e9 cr\u00e8me"' not in stdout  # unchanged line: context, decoded as latin-1
    assert ' label = "caf\u00e9 cr\u00e8me"' in stdout
    assert "@@ " in stdout
    assert "+    model = model.xpu()" in stdout
    assert "-    model = model.cuda()" in stdout
    assert "a/pkg/util.py" not in stdout  # unchanged files are not shown
    assert "torchport migrate [xpu]" in err  # the summary goes to stderr, the diff alone to stdout

    status, stdout2, err = cli("migrate", src / "train.py", "--diff", "-t", "xpu")
    assert status == 0 and stdout2.startswith("--- a/train.py\n")


def test_report_columns_and_summary_counts(cli, src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, _, err = cli("migrate", src, "-o", out, "-t", "cpu")
    assert status == 0, err
    reports = out / REPORT
    changes = read_csv(reports / "change_list.csv")
    unsupported = read_csv(reports / "unsupported_api.csv")
    unknown = read_csv(reports / "unknown_api.csv")
    notes = read_csv(reports / "notes.csv")
    assert changes[0] == CHANGE_COLUMNS
    assert unsupported[0] == API_COLUMNS
    assert unknown[0] == API_COLUMNS
    assert notes[0] == API_COLUMNS
    assert (reports / "change_list.csv").read_bytes().startswith(b"File,Start Line,End Line,Operation Type,Message,Rule\r\n")
    assert (reports / "unsupported_api.csv").read_bytes().startswith(b"File,Start Line,End Line,OP,Tips\r\n")

    for row in changes[1:]:
        assert len(row) == 6
        assert row[3] in ("INSERT", "MODIFY", "DELETE")
        assert row[5].startswith("TP") and int(row[1]) <= int(row[2])
    assert ["pkg/sub/cpu_only.py", "3", "3", "torch.cuda.make_graphed_callables"] == unsupported[1][:4]
    assert ["pkg/sub/cpu_only.py", "6", "6", "torch.cuda.not_a_real_api"] == unknown[1][:4]

    figures = summary(out)
    assert figures["target"] == "cpu"
    assert figures["changes"] == len(changes) - 1 == sum(figures["changes_by_rule"].values())
    assert figures["unsupported"] == len(unsupported) - 1 == 1
    assert figures["unknown"] == len(unknown) - 1 == 1
    assert figures["notes"] == len(notes) - 1
    assert figures["files_changed"] == len({row[0] for row in changes[1:]})
    assert figures["python_files"] == 12
    assert figures["files"] == 16  # links are not files
    assert figures["links"] == 1 and figures["not_taken"] == 3  # link_in.py; link_out.py, linked_lib, dangling.py
    assert figures["files_written"] == 16
    assert len(figures["skipped"]) == len(read_csv(reports / "skipped_files.csv")) - 1


def test_two_jobs_give_the_same_output_as_one(cli, src: Path, tmp_path: Path) -> None:
    for target in ("npu", "accelerator"):
        one, two = tmp_path / f"{target}_j1", tmp_path / f"{target}_j2"
        assert cli("migrate", src, "-o", one, "-t", target, "-j", "1")[0] == 0
        assert cli("migrate", src, "-o", two, "-t", target, "-j", "2")[0] == 0
        assert files_of(one, skip_reports=False).keys() == files_of(two, skip_reports=False).keys()
        for name, data in files_of(one, skip_reports=False).items():
            if name != f"{REPORT}/summary.json":
                assert files_of(two, skip_reports=False)[name] == data, name
        first, second = summary(one), summary(two)
        assert first.pop("output") != second.pop("output")
        assert first == second
