"""A sixth target from one file in another package: every command knows it, with no edit to torchport.

The file below is all a vendor writes: the target (device type `foo`, its device module torch.foo,
its backend "fooccl", its surface) and the device itself. It is installed the way a wheel installs
it: a `foo_target-0.1.dist-info` beside the module in a site folder, whose entry_points.txt names
the target in the group `torchport.targets`. The same file registers the device with torch
through torch's own group `torch.backends` (which torch runs at the end of `import torch`, as
torch_npu loads itself): "foo" becomes a device type (privateuse1 renamed), torch.foo its module
and "fooccl" a distributed backend (gloo underneath). No foo tensor can exist (there are no foo
kernels), so the run script proves the verdicts through what needs none: the calls that reach
torch.foo, the devices made, the process group's backend.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

from _built_in_targets import BUILT_IN
from torchport import targets
from torchport.targets import installed
from torchport.targets.base import Target

FOO_TARGET = '''\
"""The foo accelerator, for torchport: the target and (standing in for a vendor's extension) the device."""

import types

from torchport.targets import Target

SURFACE = frozenset({"is_available", "device_count", "current_device", "set_device", "synchronize", "manual_seed"})
ANSWERS = {"is_available": True, "device_count": 2, "current_device": 0}
CALLS = []  # the calls that did something, in order


def _device_module():
    module = types.ModuleType("torch.foo")
    for name in SURFACE:
        def call(*args, _name=name, **kwargs):
            if _name not in ANSWERS:
                CALLS.append(_name)
            return ANSWERS.get(_name)
        setattr(module, name, call)
    module.calls = CALLS
    return module


def register():
    import torch
    import torch.distributed as dist

    if hasattr(torch, "foo"):
        return
    torch.utils.rename_privateuse1_backend("foo")
    torch._register_device_module("foo", _device_module())
    dist.Backend.register_backend(
        "fooccl", lambda store, rank, size, timeout: dist.ProcessGroupGloo(store, rank, size, timeout), devices=["foo", "cpu"])


TARGET = Target(
    name="foo",
    summary="the foo accelerator (torch.foo): fooccl, FOO_VISIBLE_DEVICES",
    device_module="torch.foo",
    surface=SURFACE,
    device_type="foo",
    setup_import="foo_target",
    dist_backend='"fooccl"',
    visible_devices_env="FOO_VISIBLE_DEVICES",
)
'''

TRAIN = '''\
import os

import torch
import torch.distributed as dist

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group("nccl")
model = torch.nn.Linear(2, 2).cuda()
x = torch.ones(2, device="cuda:1")
torch.cuda.synchronize()
graph = torch.cuda.CUDAGraph()
'''

MIGRATED = '''\
import os

import foo_target
import torch
import torch.distributed as dist

os.environ["FOO_VISIBLE_DEVICES"] = "0,1"
dist.init_process_group("fooccl")
model = torch.nn.Linear(2, 2).to("foo")
x = torch.ones(2, device="foo:1")
torch.foo.synchronize()
graph = torch.cuda.CUDAGraph()
'''


def _install(site, name: str, module: str | None, entry_points: str) -> None:
    """What pip leaves of a wheel: the module, and its .dist-info with METADATA and entry_points.txt."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    if module is not None:
        (site / f"{name}.py").write_text(module)


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """(the site folder with foo, one with a broken target)."""
    good, broken = tmp_path_factory.mktemp("site"), tmp_path_factory.mktemp("broken_site")
    _install(good, "foo_target", FOO_TARGET,
             "[torchport.targets]\nfoo = foo_target:TARGET\n\n[torch.backends]\nfoo = foo_target:register\n")
    _install(broken, "bar_target", None, "[torchport.targets]\nbar = bar_target\n")
    return good, broken


def _torchport(sites, *args, cwd, broken=False):
    paths = [str(sites[0]), *([str(sites[1])] if broken else []), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    return subprocess.run([sys.executable, "-m", "torchport", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_torchport_targets_lists_it_and_a_broken_one_is_one_line_that_breaks_nothing(sites, tmp_path):
    done = _torchport(sites, "targets", cwd=tmp_path, broken=True)
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines() if not line.startswith(" ")]
    ranks = {**{name: targets.get(name).rank for name in targets.names()}, "foo": Target.rank}  # (foo's: the default)
    assert names == sorted(ranks, key=lambda name: (ranks[name], name))
    assert [name for name in names if name in BUILT_IN] == list(BUILT_IN)
    summary = "the foo accelerator (torch.foo): fooccl, FOO_VISIBLE_DEVICES (from foo-target 0.1)"
    assert f"foo          {summary}" in done.stdout.splitlines()
    assert done.stderr == ("torchport: target entry point bar = bar_target (bar-target 0.1) is left out: "
                           "ModuleNotFoundError: No module named 'bar_target'\n")


def test_migrate_writes_its_device_type_module_backend_and_setup_import(sites, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    done = _torchport(sites, "migrate", "train.py", "-o", "out", "--target", "foo", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "train.py").read_text() == MIGRATED
    # torch.foo has no CUDAGraph (no FOOGraph in its surface): left as it is, and reported
    with open(tmp_path / "out" / "torchport_report" / "unsupported_api.csv", newline="") as handle:
        assert [(r["OP"], r["Tips"]) for r in csv.DictReader(handle)] == [
            ("torch.cuda.CUDAGraph", "torch.foo has no CUDAGraph; port this call by hand")]


def test_analyze_reports_against_its_surface(sites, tmp_path):
    peer = "torch.cuda.synchronize()\ntorch.cuda.can_device_access_peer(0, 1)"
    (tmp_path / "train.py").write_text(TRAIN.replace("torch.cuda.synchronize()", peer))
    done = _torchport(sites, "analyze", "train.py", "-o", "out", "--target", "foo", "--mode", "apis", "-q",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out" / "torchport_report" / "unsupported_api.csv", newline="") as handle:
        rows = [(r["Start Line"], r["OP"], r["Tips"]) for r in csv.DictReader(handle)]
    # (torch_npu has both: on the npu target neither is unsupported)
    assert rows == [
        ("11", "torch.cuda.can_device_access_peer", "torch.foo has no can_device_access_peer; port this call by hand"),
        ("12", "torch.cuda.CUDAGraph", "torch.foo has no CUDAGraph; port this call by hand"),
    ]


RUN = '''\
import torch
import torch.distributed as dist

dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
torch.cuda.set_device(1)
torch.cuda.manual_seed(0)
torch.cuda.synchronize()
print(torch.cuda.is_available(), dist.get_backend(), torch.device("cuda:1"), torch.cuda.device_count(),
      torch.cuda.memory_reserved())
print(torch.foo.calls)
dist.destroy_process_group()
'''


def test_run_applies_its_verdicts_to_an_unmodified_script(sites, tmp_path):
    (tmp_path / "train.py").write_text(RUN)
    done = _torchport(sites, "run", "--target", "foo", "--log", "run.log", "train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # memory_reserved: torch.foo has no memory statistics, so the portable no-op answers 0
    assert done.stdout.splitlines() == ["True fooccl foo:1 2 0", "['set_device', 'manual_seed', 'synchronize']"]
    log = (tmp_path / "run.log").read_text()
    assert log.startswith("# torchport run: target foo (device type foo)")
    for line in ("train.py:4  torch.distributed.init_process_group(backend='nccl') -> "
                 "torch.distributed.init_process_group(backend='fooccl') [same]",
                 "train.py:7  torch.cuda.synchronize -> torch.foo.synchronize [same]",
                 "train.py:8  torch.device('cuda:1') -> torch.device('foo:1') [same]"):
        assert line in log.splitlines()


def test_ops_check_judges_only_what_needs_no_kernel_data_of_its_own(sites, tmp_path):
    ops = [{"name": "aten::addmm", "count": 3, "overloads": ["default"]},  # kernels listed for CPU, CUDA, ..., not FOO
           {"name": "aten::linalg_vector_norm", "count": 2, "overloads": ["default"]},  # not composite either
           {"name": "aten::dropout", "count": 1, "overloads": ["default"]},  # composite: one kernel for all
           {"name": "npu::npu_format_cast", "count": 1}]  # torch_npu's own operator
    (tmp_path / "ops.json").write_text(json.dumps({"schema": "torchport-ops/1", "ops": ops}))
    done = _torchport(sites, "ops", "check", "ops.json", "--target", "foo", "--all", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {line.split()[0]: line.split(None, 3)[2:] for line in lines[1:5]}
    no_data = "no kernel data for FOO: torch 2.13.0 lists none, and its target names none of its own"
    assert rows == {"npu::npu_format_cast": ["missing", "a torch_npu operator: exists only on the NPU"],
                    "aten::addmm": ["unknown", no_data], "aten::linalg_vector_norm": ["unknown", no_data],
                    "aten::dropout": ["ok", "composite"]}
    assert lines[5:] == ["torchport ops check [foo]: 4 ops: 1 missing, 2 unknown, 1 ok",
                         "  (no kernel data for foo: its target names none, and torch lists no FOO kernels; "
                         "only composite ops, one kernel for every backend, are judged)"]


@pytest.mark.parametrize(("value", "why"), [
    ("os.path", "it names module posixpath, not a torchport Target nor a module with TARGET"),
    ("torchport.targets.npu:TARGET", "a target named npu exists already"),
    ("torchport.targets.no_such_module", "ModuleNotFoundError: No module named 'torchport.targets.no_such_module'"),
])
def test_an_entry_point_without_a_usable_target_says_why_in_one_line(value, why):
    entry = EntryPoint(name="x", value=value, group=installed.GROUP)
    with pytest.raises(installed.BrokenTarget) as raised:
        installed.load(entry, {"npu"})
    assert str(raised.value) == f"target entry point x = {value} (an unknown distribution) is left out: {why}"


def test_a_target_file_that_raises_is_left_out_with_its_error_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "raising_target.py").write_text(textwrap.dedent('''\
        from torchport.targets import Target
        TARGET = Target(name="raising", summary="", device_module="torch.raising", surface=frozenset(), device_type="raising")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = EntryPoint(name="raising", value="raising_target", group=installed.GROUP)
    with pytest.raises(installed.BrokenTarget, match=r"left out: ValueError: target raising: no surface data for torch.raising$"):
        installed.load(entry, set())
