"""The patches are invisible to TorchScript and torch.compile: scripted, traced and compiled code that
calls a patched API compiles and runs as it does without them (and on the target), and undo() takes
back every registration made for them."""

from __future__ import annotations

import importlib.util
import json
import linecache
import sys
import textwrap
import types
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from torch.jit import _builtins

from torchport import runtime
from torchport.runtime.patchbook import ABSENT, PatchBook

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

SCRIPTED = textwrap.dedent('''
    import json
    from typing import Optional

    import torch


    @torch.jit.script
    def factories(x):
        return torch.ones_like(x) + torch.zeros(x.shape[0], device=x.device) + torch.arange(x.shape[0], device=x.device)


    @torch.jit.script
    def cuda_literals(x):
        y = x.cuda() + torch.ones(2, device="cuda")  # CUDA_LINE
        return y.to(torch.device("cuda", 0)), x.device == torch.device("cuda:1")


    @torch.jit.script
    def annotated(x, device: torch.device, generator: Optional[torch.Generator] = None):
        return torch.full([2], 3.0, device=device) + x


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x) * 0 + torch.ones_like(x) + torch.zeros(2, device=x.device)


    x = torch.ones(2).cuda()
    moved, same = cuda_literals(x)
    traced = torch.jit.trace(Net().cuda(), x)
    scripted = torch.jit.script(Net()).cuda()
    results = {
        "factories": factories(torch.ones(3).cuda()).tolist(),
        "cuda_literals": [moved.tolist(), moved.device.type, same],
        "annotated": annotated(x, torch.device("cuda")).tolist(),
        "traced": [traced(x).tolist(), traced(x).device.type],
        "scripted": scripted(x).tolist(),
    }
    print("FINAL", json.dumps(results))
''')

COMPILED = textwrap.dedent('''
    import json

    import torch
    from torchport import runtime


    def step(x):
        y = torch.zeros(3, device="cuda") + torch.arange(3, device=x.device) + torch.ones_like(x)
        z = x.to("cuda") + x.cuda() + x.new_ones(3, device="cuda")
        if torch.cuda.is_available() and not torch.is_autocast_enabled("cuda"):
            z = z + torch.full((3,), 2.0, device=torch.device("cuda"))
        return y + z


    x = torch.ones(3).cuda()
    expected = step(x)  # eager, under the patches
    results = {"eager": [expected.tolist(), expected.device.type]}
    for backend in ("eager", "aot_eager"):  # torch._dynamo is imported here, under the patches
        torch._dynamo.reset()
        out = torch.compile(step, backend=backend, fullgraph=True)(x)
        results[backend] = [out.tolist(), out.device.type]
    runtime.undo()  # torch as it was: Dynamo, imported under the patches, saw it unpatched
    torch._dynamo.reset()
    plain = torch.compile(lambda t: torch.zeros(3) + torch.ones_like(t), backend="eager", fullgraph=True)
    results["after_undo"] = plain(torch.ones(3)).tolist()
    runtime.apply("cpu", log=None)  # Dynamo imported already
    torch._dynamo.reset()
    out = torch.compile(step, backend="eager", fullgraph=True)(x)
    results["applied_again"] = [out.tolist(), out.device.type]
    print("FINAL", json.dumps(results))
''')


def _final(result) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("FINAL "), result.stdout[-2000:]
    return json.loads(last[len("FINAL "):])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_tool):
    """`torchport run --target cpu` of both scripts, side by side: name -> (result, log text)."""
    def run(name, source):
        directory = tmp_path_factory.mktemp(name)
        (directory / f"{name}.py").write_text(source)
        result = run_tool(["torchport", "run", "--target", "cpu", f"{name}.py"], directory,
                          env={"OMP_NUM_THREADS": "1"})
        log = directory / "torchport_run.log"
        return result, (log.read_text() if log.exists() else "")

    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {name: pool.submit(run, name, source)
                for name, source in (("scripted", SCRIPTED), ("compiled", COMPILED))}
    return {name: job.result() for name, job in jobs.items()}


@pytest.mark.fidelity  # `torchport run` of TorchScript and torch.compile'd scripts: make fidelity
def test_scripted_and_traced_code_that_calls_patched_factories_compiles_and_runs(runs):
    result, _ = runs["scripted"]
    found = _final(result)
    assert found["factories"] == [1.0, 2.0, 3.0]
    assert found["annotated"] == [4.0, 4.0]
    assert found["traced"] == [[1.0, 1.0], "cpu"]
    assert found["scripted"] == [1.0, 1.0]


@pytest.mark.fidelity  # `torchport run` of TorchScript and torch.compile'd scripts: make fidelity
def test_cuda_devices_written_in_scripted_code_become_the_targets_and_are_logged(runs):
    result, log = runs["scripted"]
    assert _final(result)["cuda_literals"] == [[2.0, 2.0], "cpu", True]  # as in eager code under run
    line = next(n for n, text in enumerate(SCRIPTED.splitlines(), 1) if "CUDA_LINE" in text)
    assert f"scripted.py:{line}  TorchScript torch.Tensor.cuda -> torch.Tensor.to('cpu') [adapted]" in log
    assert f"scripted.py:{line}  TorchScript torch.device('cuda') -> torch.device('cpu') [same]" in log


@pytest.mark.fidelity  # `torchport run` of TorchScript and torch.compile'd scripts: make fidelity
def test_compiled_code_that_calls_patched_apis_runs_as_eager_code_does(runs):
    result, _ = runs["compiled"]
    found = _final(result)
    expected = [[6.0, 7.0, 8.0], "cpu"]  # 0 + [0, 1, 2] + 1, then + (1 + 1 + 1) + 2
    assert found["eager"] == expected
    assert found["eager"] == found["aot_eager"] == expected
    assert found["after_undo"] == [1.0, 1.0, 1.0]
    assert found["applied_again"] == expected


def _wrappers(session) -> list:
    return [vars(owner)[name] for owner, name, _ in session.book.patched()]


def test_wrappers_are_the_builtins_they_wrap_until_undo(tmp_path):
    original_script = torch.jit.script
    session = runtime.apply("cpu", log=str(tmp_path / "log.txt"))
    try:
        wrappers = _wrappers(session)  # kept alive: no id of theirs is reused below
        assert torch.ones_like is not torch._C._VariableFunctions.ones_like
        assert _builtins._find_builtin(torch.ones_like) == "aten::ones_like"
        assert _builtins._find_builtin(torch.zeros) == "aten::zeros"
        assert _builtins._find_builtin(torch.device) == "aten::device"
        held = (torch.ones_like, torch.device)

        def ones_plus(x):
            return torch.ones_like(x) + torch.zeros(2, device=x.device)

        assert torch.jit.script(ones_plus)(torch.ones(2)).tolist() == [1.0, 1.0]
        registered = session.book.registered()
        assert registered and {key for _, key, _ in registered} <= {id(w) for w in wrappers}
    finally:
        runtime.undo()
    table = _builtins._get_builtin_table()
    for _, key, previous in registered:
        assert previous is ABSENT and key not in table
    assert _builtins._find_builtin(held[0]) is None and _builtins._find_builtin(held[1]) is None
    assert torch.jit.script is original_script
    assert _builtins._find_builtin(torch.ones_like) == "aten::ones_like"
    assert not [f for f in sys.meta_path if type(f).__name__ == "_UnpatchedImport"]


def test_an_annotation_with_the_real_torch_device_class_still_compiles(tmp_path, runtime_on):
    (tmp_path / "real_device_annotation.py").write_text(
        "import torch\n"
        "RealDevice = torch.device  # the class itself, read before the patch\n"
        "def zeros_on(x, device: RealDevice):\n"
        "    return torch.zeros(2, device=device) + x\n")
    spec = importlib.util.spec_from_file_location("real_device_annotation", tmp_path / "real_device_annotation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runtime_on("cpu")
    assert torch.device is not module.RealDevice
    assert torch.jit.script(module.zeros_on)(torch.ones(2), torch.device("cuda")).tolist() == [1.0, 1.0]


def test_torchs_own_scripted_code_keeps_its_cuda_devices(runtime_on):
    runtime_on("cpu")
    source = "def f(x):\n    return x.to('cuda')\n"
    graphs = {}
    for module in ("torch.fake_module", "script_module"):
        namespace, filename = {"__name__": module, "torch": torch}, f"<{module}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for TorchScript
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102
        exec("scripted = torch.jit.script(f)", namespace)  # the caller of torch.jit.script
        graphs[module] = str(namespace["scripted"].graph)
        del linecache.cache[filename]
    assert 'value="cuda"' in graphs["torch.fake_module"]
    assert 'value="cuda"' not in graphs["script_module"] and 'value="cpu"' in graphs["script_module"]


def test_patch_book_takes_back_registry_entries_and_hooks_and_can_be_suspended():
    owner, registry, calls = types.SimpleNamespace(kept="old"), {"there": 1}, []
    book = PatchBook()
    book.replace(owner, "kept", "new")
    book.replace(owner, "added", "new")
    book.register(registry, "there", 2)
    book.register(registry, "added", 3)
    book.on_restore(lambda: calls.append("undone"))
    assert book.patched() == [(owner, "kept", "old"), (owner, "added", ABSENT)]
    assert book.registered() == [(registry, "there", 1), (registry, "added", ABSENT)]
    with book.suspended():
        assert owner.kept == "old" and not hasattr(owner, "added")
    assert owner.kept == owner.added == "new"
    book.restore_all()
    assert vars(owner) == {"kept": "old"} and registry == {"there": 1} and calls == ["undone"]
