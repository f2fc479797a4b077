"""Guarded workers: a file that crashes the parser, recurses deeply, runs too long or needs too much
memory costs only itself; every other file is migrated, and results keep the order of the jobs."""

from __future__ import annotations

import pytest

from torchport.migrate.workers import Job, migrate_guarded

CUDA = b"import torch\nok = torch.cuda.is_available()\n"
PLAIN = b"import torch\nx = 1\n"


def nested(depth: int) -> bytes:
    return CUDA + b"y = " + b"(" * depth + b"1" + b")" * depth + b"\n"


def results(jobs: dict[str, bytes], **options) -> dict[str, object]:
    pairs = list(migrate_guarded([Job(name, data) for name, data in jobs.items()], "cpu", **options))
    assert [job.relative for job, _ in pairs] == list(jobs)  # the order of the jobs
    return {job.relative: result for job, result in pairs}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_native_parser_crash_costs_only_its_file(workers: int) -> None:
    got = results({"a.py": CUDA, "bomb.py": nested(200_000), "b.py": CUDA, "c.py": PLAIN}, workers=workers)
    assert got["a.py"].changed and b"torch.cuda" not in got["a.py"].source
    assert got["b.py"].changed and got["c.py"].error is None
    bomb = got["bomb.py"]
    assert bomb.source == nested(200_000) and not bomb.findings
    assert "too many nested parentheses" in bomb.error and "crashed" in bomb.error


def test_deep_but_valid_code_is_still_migrated() -> None:
    concatenation = CUDA + b"s = " + b" + ".join(b"'a%d'" % i for i in range(1000)) + b"\n"
    branches = CUDA + b"v = 0\nif v == 0:\n    pass\n" + b"".join(
        b"elif v == %d:\n    n = torch.cuda.device_count()\n" % i for i in range(1, 400)
    )
    got = results({"concat.py": concatenation, "elif.py": branches})
    assert got["concat.py"].error is None and got["concat.py"].changed
    assert got["elif.py"].error is None
    assert got["elif.py"].source.count(b"torch.cuda.device_count()") == 0


def test_code_that_python_rejects_is_listed_whether_or_not_it_mentions_cuda() -> None:
    got = results({"py2.py": b"print 'hello'\n", "py2_cuda.py": b"import torch\nprint torch.cuda.is_available()\n"})
    for name in ("py2.py", "py2_cuda.py"):
        assert got[name].error and "not valid Python" in got[name].error or "Syntax" in got[name].error
        assert not got[name].changed


def test_a_file_over_its_time_budget_is_given_up_and_the_rest_go_on() -> None:
    slow = CUDA + b"".join(b"def f%d(x):\n    return x.cuda()\n" % i for i in range(3000))
    got = results({"slow.py": slow, "a.py": CUDA}, timeout=0.2)
    assert got["slow.py"].error == "took longer than 0.2 s to migrate" and got["slow.py"].source == slow
    assert got["a.py"].error is None and got["a.py"].changed


@pytest.mark.fidelity  # (a worker process run to its memory limit)
def test_a_file_over_its_memory_budget_is_given_up_and_the_rest_go_on() -> None:
    pytest.importorskip("resource")
    # (one class: a statement no piece can cut, see pieces.py)
    big = CUDA + b"class Big:\n" + b"".join(b"    def f%d(self, x):\n        return x.cuda()\n" % i for i in range(20_000))
    got = results({"big.py": big, "a.py": CUDA}, memory=300 << 20, workers=1)
    assert got["big.py"].source == big and got["big.py"].error
    assert "memory" in got["big.py"].error or "crashed" in got["big.py"].error
    assert got["a.py"].error is None and got["a.py"].changed


def test_settling_keeps_what_the_process_holds_out_of_the_collectors_full_passes() -> None:
    import gc

    from torchport.migrate.workers import settle

    held = len(gc.get_objects())
    try:
        settle()
        assert gc.get_freeze_count() >= held // 2 and len(gc.get_objects()) < held // 2
    finally:
        gc.unfreeze()
