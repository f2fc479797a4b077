"""Progress through the files of a run, on stderr: a bar with an ETA on a terminal (tqdm), and a
line every few seconds when stderr is a pipe or a file (a CI log, `| tee`), where a bar's
carriage returns would be one endless line. `-q` asks for neither."""

from __future__ import annotations

import shutil
import sys
import time
from typing import Callable, Protocol, TextIO

BAR_MIN_FILES = 20  # fewer files go by before a bar is worth drawing
INTERVAL = 5.0  # seconds between two lines when piped
# Files cost very different times (a 30-line script, a 5,000-line model zoo): the time left is
# estimated from the average over the run so far, and said only once that average means something.
ESTIMATE_MIN_FILES = 10
ESTIMATE_MIN_SHARE = 0.05
ESTIMATING = "estimating"


def estimate_ready(done: int, total: int) -> bool:
    """Whether `done` of `total` files are enough to tell the time left."""
    return done >= min(total, max(ESTIMATE_MIN_FILES, ESTIMATE_MIN_SHARE * total))


class Progress(Protocol):
    def step(self) -> None: ...

    def done(self) -> None: ...


def progress_for(total: int, wanted: bool, stream: TextIO | None = None) -> Progress | None:
    """How to show progress through `total` files on `stream` (stderr): None when not `wanted`
    (-q) or for a terminal and a run too small for a bar."""
    stream = stream if stream is not None else sys.stderr
    if not wanted or not total:
        return None
    if _is_terminal(stream):
        return Bar(total, stream) if total >= BAR_MIN_FILES else None
    return Lines(total, stream)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # (a closed or odd stream)
        return False


class Bar:
    """tqdm's bar: files done, the rate, time spent and the time left (from the whole run's
    average, `smoothing=0`, once estimate_ready; "estimating" before)."""

    WAITING = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<" + ESTIMATING + "]"

    def __init__(self, total: int, stream: TextIO) -> None:
        from tqdm import tqdm  # (here: a run without a bar does not pay for the import)

        # A size from shutil (80x24 where the terminal tells none): tqdm's own reading of a
        # terminal with no size (a bare pty) is -1 rows, and it closes the bar before drawing it.
        size = shutil.get_terminal_size()
        self.total = total
        self.bar = tqdm(total=total, file=stream, unit="file", ncols=size.columns, nrows=size.lines, leave=True,
                        smoothing=0, bar_format=self.WAITING)

    def step(self) -> None:
        if self.bar.bar_format is not None and estimate_ready(self.bar.n + 1, self.total):
            self.bar.bar_format = None  # (tqdm's own, with the time left)
        self.bar.update(1)

    def done(self) -> None:
        self.bar.close()


class Lines:
    """One line per `interval` seconds at most, written when a file is done: where the run is,
    and about how long is left at the rate so far. A run that ends before the first interval
    writes nothing; one that wrote lines ends with a line of its own."""

    def __init__(
        self, total: int, stream: TextIO, interval: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.total = total
        self.stream = stream
        self.interval = INTERVAL if interval is None else interval
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self.count = 0
        self.said = False

    def step(self) -> None:
        self.count += 1
        now = self.clock()
        if now - self.last >= self.interval and self.count < self.total:
            self.last = now
            elapsed = now - self.started
            left = elapsed * (self.total - self.count) / self.count
            said = f"about {_clock(left)} left" if estimate_ready(self.count, self.total) else f"{ESTIMATING} the time left"
            self._say(f"{self._where()}, {_clock(elapsed)} elapsed, {said}")

    def done(self) -> None:
        if self.said:
            self._say(f"{self._where()} in {_clock(self.clock() - self.started)}")

    def _where(self) -> str:
        return f"{self.count}/{self.total} files ({100 * self.count // self.total}%)"

    def _say(self, text: str) -> None:
        self.said = True
        print(f"torchport: {text}", file=self.stream, flush=True)


def _clock(seconds: float) -> str:
    """`seconds` as [h:]mm:ss, as tqdm's bar writes it."""
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"
