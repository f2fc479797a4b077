"""Progress on stderr: a bar on a terminal, a line every few seconds when piped, nothing with -q.
No test waits: a fake clock, or an interval of 0."""

from __future__ import annotations

import io
import re

from _report_page import make_tree

from torchport.migrate import progress
from torchport.migrate.progress import Bar, Lines, progress_for


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_progress_is_a_line_per_interval_with_the_time_left_then_a_last_line():
    stream, clock = io.StringIO(), Clock()
    lines = Lines(10, stream, interval=5, clock=clock)
    for seconds in (1, 1, 4, 1, 1, 1, 6, 1, 1, 1):  # 10 files, done after these many seconds each
        clock.now += seconds
        lines.step()
    lines.done()
    assert stream.getvalue().splitlines() == [
        "torchport: 3/10 files (30%), 00:06 elapsed, estimating the time left",
        "torchport: 7/10 files (70%), 00:15 elapsed, estimating the time left",
        "torchport: 10/10 files (100%) in 00:18",
    ]


def test_the_time_left_waits_for_enough_files_to_mean_something():
    """A few files say little of the rest (one heavy file first): the estimate waits for ten files,
    or a twentieth of a large run, and then averages over the whole run so far."""
    stream, clock = io.StringIO(), Clock()
    lines = Lines(400, stream, interval=5, clock=clock)
    for seconds in [30] + [1] * 39:  # one heavy file, then quick ones
        clock.now += seconds
        lines.step()
    said = stream.getvalue().splitlines()
    assert said[0] == "torchport: 1/400 files (0%), 00:30 elapsed, estimating the time left"
    assert all("estimating" in line for line in said if int(line.split("/")[0].split()[-1]) < 20)
    assert said[-1] == "torchport: 36/400 files (9%), 01:05 elapsed, about 10:57 left"  # 65 s * 364 / 36
    assert progress.estimate_ready(10, 100) and not progress.estimate_ready(9, 100)
    assert progress.estimate_ready(3, 3) and not progress.estimate_ready(19, 400)


def test_a_run_shorter_than_the_interval_prints_nothing_when_piped():
    stream, clock = io.StringIO(), Clock()
    lines = Lines(3, stream, interval=5, clock=clock)
    for _ in range(3):
        clock.now += 1
        lines.step()
    lines.done()
    assert stream.getvalue() == ""


def test_the_kind_of_progress_follows_the_stream_and_quiet():
    assert isinstance(progress_for(3, True, io.StringIO()), Lines)
    assert progress_for(3, False, io.StringIO()) is None
    assert progress_for(3, True, Terminal()) is None  # (a bar for three files would only flicker)
    bar = progress_for(progress.BAR_MIN_FILES, True, Terminal())
    assert isinstance(bar, Bar)
    bar.step()
    bar.done()


def test_the_terminal_bar_shows_the_time_left_once_it_means_something():
    stream = Terminal()
    bar = Bar(40, stream)
    for _ in range(2):
        bar.step()
    bar.bar.refresh()  # (tqdm draws at most every 0.1 s)
    assert stream.getvalue().rstrip().endswith("2/40 [00:00<estimating]")
    for _ in range(10):
        bar.step()
    bar.done()
    last = stream.getvalue().rsplit("\r", 1)[-1]
    assert "12/40" in last and re.search(r"<\d\d:\d\d", last), last  # tqdm's [elapsed<remaining]


def test_migrate_piped_prints_progress_lines_and_with_q_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    src = make_tree(tmp_path / "src")
    status, _, err = cli("migrate", src, "-o", tmp_path / "out")
    assert status == 0
    assert re.fullmatch(r"torchport: 3/3 files \(100%\) in \d\d:\d\d", err.splitlines()[-1])
    assert len(err.splitlines()) == 3  # after the first and the second file, and the last line
    status, out, err = cli("migrate", src, "-o", tmp_path / "quiet", "-q")
    assert (status, out, err) == (0, "", "")
