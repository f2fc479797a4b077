"""spawn.launch_in_place: mp.spawn's function run in the process the launcher started."""

import pytest

from torchport.distribute.detect import Plan
from torchport.distribute.spawn import launch_in_place

from _distribute_steps import messages, run

SPAWNS = Plan(entry=True, already="it makes its process group", spawns=True)
RANK = 'int(os.environ["LOCAL_RANK"])'
LAUNCHED = 'if "LOCAL_RANK" in os.environ:  # one process per device, started by a launcher (run_distributed.sh)'


@pytest.mark.parametrize(("imports", "call", "expected"), [
    ("import torch.multiprocessing as mp", "mp.spawn(main_worker, args=(world_size, args), nprocs=world_size, join=True)",
     f"main_worker({RANK}, world_size, args)"),
    ("import torch.multiprocessing as mp", "mp.spawn(run, nprocs=2, args=(2,))", f"run({RANK}, 2)"),
    ("import torch.multiprocessing as mp", "mp.spawn(train, args=[cfg, *extra], nprocs=n)", f"train({RANK}, cfg, *extra)"),
    ("import torch.multiprocessing as mp", "mp.spawn(fn, args=args, nprocs=n)", f"fn({RANK}, *args)"),
    ("import torch.multiprocessing as mp", "mp.spawn(fn, nprocs=n)", f"fn({RANK})"),
    ("import torch.multiprocessing as mp", "mp.spawn(fn, (a, b), n, True)", f"fn({RANK}, a, b)"),
    ("import torch", "torch.multiprocessing.spawn(demo, args=(world_size,), nprocs=world_size)", f"demo({RANK}, world_size)"),
    ("from torch.multiprocessing import spawn", "spawn(main, nprocs=2, args=(2,))", f"main({RANK}, 2)"),
    ("import torch.multiprocessing as mp", "mp.start_processes(fn, args=(a,), nprocs=2, start_method='fork')", f"fn({RANK}, a)"),
])
def test_the_spawned_function_is_called_with_the_launchers_local_rank(imports, call, expected):
    source = f"import os\n{imports}\nif __name__ == '__main__':\n    {call}\n"
    text, rows = run(launch_in_place, source, SPAWNS)
    assert text == (f"import os\n{imports}\nif __name__ == '__main__':\n    {LAUNCHED}\n        {expected}\n"
                    f"    else:\n        {call}\n")
    assert rows == [(4, "TP204", "MODIFY")]


def test_a_spawn_written_over_lines_becomes_one_call():
    source = ("import os\nimport torch.multiprocessing as mp\ntry:\n    mp.spawn(\n        main,\n        args=(opt, n),\n"
              "        nprocs=n,\n        join=True\n    )\nexcept KeyboardInterrupt:\n    pass\n")
    text, _ = run(launch_in_place, source, SPAWNS)
    assert f"try:\n    {LAUNCHED}\n        main({RANK}, opt, n)\n    else:\n        mp.spawn(\n" in text


@pytest.mark.parametrize("call", ["ctx = mp.spawn(fn, nprocs=2, join=False)", "mp.spawn(fn, nprocs=2, join=False)",
                                  "return mp.spawn(fn, nprocs=2)"])
def test_a_spawn_whose_processes_the_script_keeps_is_kept_with_a_row(call):
    source = f"import os\nimport torch.multiprocessing as mp\ndef go():\n    {call}\n"
    text, rows = run(launch_in_place, source, SPAWNS)
    assert text == source and rows == [(4, "TP204", "NOTE")]


def test_the_scripts_rendezvous_becomes_a_default_the_launcher_overrides():
    source = ("import os\nimport torch.multiprocessing as mp\ndef setup(rank, n):\n    os.environ['MASTER_ADDR'] = 'localhost'\n"
              "    os.environ[\"MASTER_PORT\"] = str(port)\n    os.environ['NCCL_DEBUG'] = 'INFO'\n"
              "mp.spawn(setup, args=(2,), nprocs=2)\n")
    text, rows = run(launch_in_place, source, SPAWNS)
    assert ("    os.environ.setdefault('MASTER_ADDR', 'localhost')\n    os.environ.setdefault(\"MASTER_PORT\", str(port))\n"
            "    os.environ['NCCL_DEBUG'] = 'INFO'\n") in text
    assert sorted(rows) == [(4, "TP204", "MODIFY"), (5, "TP204", "MODIFY"), (7, "TP204", "MODIFY")]


def test_os_is_imported_where_the_file_lacks_it():
    source = "import torch.multiprocessing as mp\nmp.spawn(fn, nprocs=2)\n"
    text, rows = run(launch_in_place, source, SPAWNS)
    assert text == f"import os\nimport torch.multiprocessing as mp\n{LAUNCHED}\n    fn({RANK})\nelse:\n    mp.spawn(fn, nprocs=2)\n"
    assert (1, "TP204", "INSERT") in rows


def test_a_file_that_does_not_spawn_is_left_as_it_is():
    source = "import torch.multiprocessing as mp\nmp.spawn(fn, nprocs=2)\n"
    assert run(launch_in_place, source, Plan(entry=True)) == (source, [])


def test_the_row_says_the_launcher_decides_the_process_count():
    assert "--nproc_per_node" in messages(launch_in_place, "import os\nimport torch.multiprocessing as mp\nmp.spawn(f, nprocs=2)\n", SPAWNS)[0]


def test_a_spawn_whose_processes_report_back_through_a_queue_is_kept_with_a_row():
    source = ("import os\nimport torch.multiprocessing as mp\nresults = mp.get_context('spawn').SimpleQueue()\n"
              "mp.spawn(train, args=(2, results), nprocs=2)\nassert not results.empty()\n")
    text, rows = run(launch_in_place, source, SPAWNS)
    assert text == source and rows == [(4, "TP204", "NOTE")]
    assert "results" in messages(launch_in_place, source, SPAWNS)[0]


def test_started_without_a_launcher_the_script_spawns_as_it_did():
    source = "import os\nimport torch.multiprocessing as mp\nmp.spawn(fn, nprocs=2)\n"
    text, _ = run(launch_in_place, source, SPAWNS)
    calls = []
    namespace = {"__name__": "t", "fn": lambda rank: calls.append(("launched", rank))}
    import torch.multiprocessing as mp
    spawned = lambda fn, nprocs: calls.append(("spawned", nprocs))  # noqa: E731
    for environ, expected in (({}, ("spawned", 2)), ({"LOCAL_RANK": "1"}, ("launched", 1))):
        calls.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(mp, "spawn", spawned)
            for name in ("LOCAL_RANK",):
                patch.delenv(name, raising=False)
            for name, value in environ.items():
                patch.setenv(name, value)
            exec(compile(text, "<distributed>", "exec"), dict(namespace))
        assert calls == [expected]


LAUNCHED_SIZE = 'world_size=int(os.environ["WORLD_SIZE"]) if "LOCAL_RANK" in os.environ else n'
LAUNCHED_RANK = 'rank=int(os.environ["RANK"]) if "LOCAL_RANK" in os.environ else rank'


@pytest.mark.parametrize(("init", "expected"), [
    ("dist.init_process_group(backend='nccl', init_method=args.dist_url, world_size=n, rank=rank)",
     "dist.init_process_group(backend='nccl', init_method=\"env://\" if \"LOCAL_RANK\" in os.environ else args.dist_url, "
     f"{LAUNCHED_SIZE}, {LAUNCHED_RANK})"),
    ("dist.init_process_group('nccl', 'tcp://127.0.0.1:23456', world_size=n, rank=rank)",
     "dist.init_process_group('nccl', \"env://\" if \"LOCAL_RANK\" in os.environ else 'tcp://127.0.0.1:23456', "
     f"{LAUNCHED_SIZE}, {LAUNCHED_RANK})"),
    ("dist.init_process_group('nccl', init_method='env://', world_size=n, rank=rank)",
     f"dist.init_process_group('nccl', init_method='env://', {LAUNCHED_SIZE}, {LAUNCHED_RANK})"),
    ("dist.init_process_group('nccl', world_size=n, rank=rank)",
     f"dist.init_process_group('nccl', {LAUNCHED_SIZE}, {LAUNCHED_RANK})"),
    ("dist.init_process_group('nccl')", None),
])
def test_under_a_launcher_the_spawned_workers_join_its_rendezvous(init, expected):
    """torchrun's agent serves the group's store (TORCHELASTIC_USE_AGENT_STORE): a tcp:// URL of the
    script's own would leave every rank waiting for a store nobody serves; and the world size the
    script counts from its devices (`ngpus_per_node * args.world_size`: 1 on a machine without
    them) is not the launcher's."""
    source = (f"import os\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n"
              f"def worker(rank, n, args):\n    {init}\nmp.spawn(worker, args=(2, args), nprocs=2)\n")
    text, rows = run(launch_in_place, source, SPAWNS)
    assert f"    {expected or init}\n" in text
    assert ((5, "TP204", "MODIFY") in rows) == (expected is not None)


def test_under_a_launcher_the_rank_and_size_are_the_launchers_and_without_one_the_scripts():
    given = {}
    namespace = {"os": __import__("os"), "dist": type("d", (), {"init_process_group": lambda *a, **k: given.update(k)}),
                 "n": 1, "rank": 1}
    line = f"dist.init_process_group('gloo', {LAUNCHED_SIZE}, {LAUNCHED_RANK})"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCAL_RANK", "1"), patch.setenv("RANK", "1"), patch.setenv("WORLD_SIZE", "2")
        exec(line, dict(namespace))
        assert given == {"world_size": 2, "rank": 1}
        patch.delenv("LOCAL_RANK")
        exec(line, dict(namespace))
        assert given == {"world_size": 1, "rank": 1}
