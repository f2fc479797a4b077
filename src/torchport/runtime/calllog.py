"""The run-time migration log: one line per redirected API per call site, a summary at the end.

    # torchport run: target cpu (device type cpu), torch 2.13.0, pid 4242
    train.py:57  torch.cuda.synchronize -> (removed) [no-op] CPU work is synchronous
    train.py:61  torch.Tensor.to('cuda:0') -> torch.Tensor.to('cpu') [adapted] ...
    # summary: 2 call sites, 41 calls: 0 same, 1 adapted, 1 no-op, 0 unsupported
    #   torch.cuda.synchronize: 1 site, 20 calls

A call site is the first frame outside torch and torchport; sites are cached by (code object,
instruction, API), so a call in a training loop costs two dict look-ups after its first time.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

from torchport.runtime.callers import report_frame

KINDS = ("same", "adapted", "no-op", "unsupported")


def log_path_for_process(path: str) -> str:
    """`path` for the main process or rank 0; `name.rank<N>.log` for other torchrun ranks and
    `name.pid<N>.log` for multiprocessing children, so that processes never clobber each other."""
    stem, ext = os.path.splitext(path)
    rank = os.environ.get("RANK")
    if rank not in (None, "", "0"):
        stem += f".rank{rank}"
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        stem += f".pid{os.getpid()}"
    return stem + ext


class CallLog:
    """Collects redirected calls; writes each new call site to the log file as it happens."""

    def __init__(self, path: str | None, header: str, announce: bool = True) -> None:
        self.path = log_path_for_process(path) if path else None
        self.header = header
        self.announce = announce  # print the one-line summary to stderr at the end
        self._file = None
        self._closed = False
        # Hot look-ups are keyed by id(code) and the instruction offset: hashing a code object
        # hashes all its contents (microseconds for a long training function) and f_lineno
        # decodes the line table. The code objects are kept alive here, so no id is reused.
        self._inside: dict = {}  # id(code) -> whether it lies in torch or torchport
        self._alive: list = []  # the code objects keyed by id in _inside
        self._slots: dict = {}  # (id(code), f_lasti, api) -> its site's counter cell
        self._counters: dict = {}  # (code, line, api) -> [number of calls], one per call site
        self.sites: list[tuple[str, object]] = []  # (file:line, verdict) in order of first call

    def note(self, verdict, depth: int = 1) -> None:
        """Record a call of `verdict.api`; `depth` is how far the caller is above our caller."""
        self.note_frame(verdict, sys._getframe(depth + 1))

    def note_frame(self, verdict, frame) -> None:
        """Record a call of `verdict.api` made in `frame` (or, when that lies in torch or
        torchport, at the first frame outside them).

        The fast path (a call made before at the same place) is two dict look-ups; frames in
        torch or torchport are recognised once per code object and only then walked past."""
        code = frame.f_code
        inside = self._inside.get(id(code))
        if inside is None:
            inside = self._inside[id(code)] = report_frame(frame) is not frame
            self._alive.append(code)
        if inside:
            frame = report_frame(frame)
            code = frame.f_code
        cell = self._slots.get((id(code), frame.f_lasti, verdict.api))
        if cell is not None:
            cell[0] += 1
        else:
            self._first_call_at(verdict, frame)

    def _first_call_at(self, verdict, frame) -> None:
        """Count a call at an instruction not seen before, logging its line if that is new."""
        code, line = frame.f_code, frame.f_lineno
        key = (code, line, verdict.api)
        cell = self._counters.get(key)
        if cell is None:
            cell = self._counters[key] = [0]
            site = f"{_short(code.co_filename)}:{line}"
            self.sites.append((site, verdict))
            self._write(f"{site}  {verdict.describe()}")
        self._slots[(id(code), frame.f_lasti, verdict.api)] = cell
        cell[0] += 1

    @property
    def calls(self) -> Counter:
        """verdict.api -> number of calls, over all call sites."""
        totals: Counter = Counter()
        for (_, _, api), (count,) in self._counters.items():
            totals[api] += count
        return totals

    def note_at(self, site: str, verdict) -> None:
        """Record a change made once at start-up, with no call site (an environment variable)."""
        self._counters[(None, site, verdict.api)] = [1]
        self.sites.append((site, verdict))
        self._write(f"{site}  {verdict.describe()}")

    def counts(self) -> dict[str, int]:
        kinds = Counter(verdict.kind.value for _, verdict in self.sites)
        return {kind: kinds.get(kind, 0) for kind in KINDS}

    def summary_lines(self) -> list[str]:
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        calls = self.calls
        lines = [f"# summary: {len(self.sites)} call sites, {sum(calls.values())} calls: {counts}"]
        per_api = Counter(verdict.api for _, verdict in self.sites)
        for api, sites in sorted(per_api.items()):
            lines.append(f"#   {api}: {sites} site{'s' * (sites != 1)}, {calls[api]} calls")
        return lines

    def close(self) -> None:
        """Append the summary and announce it on stderr (once; later calls are not logged)."""
        if self._closed:
            return
        if self.sites:
            for line in self.summary_lines():
                self._write(line)
            if self.announce:
                where = f"; log: {self.path}" if self.path else ""
                print(f"torchport: {self.summary_lines()[0][len('# summary: '):]}{where}", file=sys.stderr)
        self._closed = True
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, line: str) -> None:
        if self._closed or self.path is None:
            return
        if self._file is None:
            try:
                self._file = open(self.path, "w", buffering=1, encoding="utf-8")
            except OSError as error:
                print(f"torchport: cannot write the log {self.path}: {error.strerror}", file=sys.stderr)
                self.path = None
                return
            self._file.write(self.header + "\n")
        self._file.write(line + "\n")


def _short(filename: str) -> str:
    """A path relative to the working directory when the file lies below it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
