"""The run-time migration log: one line per redirected API per call site, a summary at the end.

    # torchport run: target cpu (device type cpu), torch 2.13.0, pid 4242, train.py --epochs 1
    train.py:57  torch.cuda.synchronize -> (removed) [no-op] CPU work is synchronous
    train.py:61  torch.Tensor.to('cuda:0') -> torch.Tensor.to('cpu') [adapted] ...
    # summary: 2 call sites, 41 calls: 0 same, 1 adapted, 1 no-op, 0 unsupported
    #   torch.cuda.synchronize: 1 site, 20 calls

A call site is the first frame outside torch and torchport; sites are cached by (code object,
instruction, API), so a call in a training loop costs two dict look-ups after its first time.

One file per process, named from the requested path (see `log_path_for_process`): `torchport_run.log`
for a process started on its own, `torchport_run.rank<N>.log` for every rank of a torchrun-style
launch (RANK set; rank 0 too), `.proc<I>` added for the I-th process of `torch.multiprocessing.spawn`
and `.pid<PID>` for any other child process (multiprocessing, DataLoader workers, os.fork). A
process writes its file, summary and stderr line only if code outside torch and torchport made a
redirected call there: a launcher (torchrun's agent, `torchport run -m torch.distributed.run`, an
mp.spawn parent that only spawns) leaves no file and prints nothing; start-up notes (a copied
CUDA_VISIBLE_DEVICES) do not count, and head the file of a process that goes on to make a call.
Of the workers only rank 0 or spawn process 0 prints the stderr line; a process started on its
own prints its own (an mp.spawn parent too, if it made calls). A file is taken under an exclusive
lock (flock) and only then emptied, so a log left by an earlier run is replaced but one that a
live process holds is never truncated: the newcomer writes `<name>.pid<PID>.log` instead.
"""

from __future__ import annotations

import os
import stat
import sys
import weakref
from collections import Counter

from torchport.runtime.callers import report_frame

KINDS = ("same", "adapted", "no-op", "unsupported")

_TORCH_SPAWN = ("torch.multiprocessing.spawn", "_wrap")  # the target of mp.spawn's processes


def log_path_for_process(path: str, forked: bool = False) -> str:
    """The file this process logs to, for a requested `path` (see the module's docstring).

    `forked`: this process is a fork of one that had the log open (the fork keeps RANK, so it
    needs a part of its own). A path that is no regular file (/dev/stderr, a FIFO) is shared as given."""
    if os.path.exists(path) and not os.path.isfile(path):
        return path
    stem, ext = os.path.splitext(path)
    rank = os.environ.get("RANK")
    if rank:
        stem += f".rank{rank}"
    return stem + _child_part(forked) + ext


def _child_part(forked: bool) -> str:
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.parent_process() is not None:
        process = multiprocessing.current_process()
        target = getattr(process, "_target", None)
        if (getattr(target, "__module__", None), getattr(target, "__name__", None)) == _TORCH_SPAWN:
            return f".proc{process._args[1]}"  # _wrap(fn, i, args, error_file)
        return f".pid{os.getpid()}"
    return f".pid{os.getpid()}" if forked else ""


def _named_yet() -> bool:
    """False while a spawned child is still importing its parent's main module: it cannot tell
    yet which process of an mp.spawn it is."""
    multiprocessing = sys.modules.get("multiprocessing")
    return multiprocessing is None or not getattr(multiprocessing.current_process(), "_inheriting", False)


class CallLog:
    """Collects redirected calls; writes each new call site to this process's log file."""

    def __init__(self, path: str | None, header, announce: bool = True) -> None:
        self.requested = path  # the path asked for; self.path is this process's own file
        self.path = None if path is None else log_path_for_process(path)
        self._header = header  # the first line, or a function of the pid that returns it
        self.announce = announce  # print the one-line summary to stderr at the end
        self._file = None
        self._closed = False
        self._forked = False
        self._used = False  # code outside torch and torchport made a redirected call here
        self._pending: list[str] = []  # lines not written yet: no user call yet, or no name yet
        # Hot look-ups are keyed by id(code) and the instruction offset: hashing a code object
        # hashes all its contents (microseconds for a long training function) and f_lineno
        # decodes the line table. The code objects are kept alive here, so no id is reused.
        self._inside: dict = {}  # id(code) -> whether it lies in torch or torchport
        self._alive: list = []  # the code objects keyed by id in _inside
        self._slots: dict = {}  # (id(code), f_lasti, api) -> its site's counter cell
        self._counters: dict = {}  # (code, line, api) -> [number of calls], one per call site
        self.sites: list[tuple[str, object]] = []  # (file:line, verdict) in order of first call
        _LIVE.add(self)

    @property
    def header(self) -> str:
        return self._header(os.getpid()) if callable(self._header) else self._header

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
            site = f"{short_path(code.co_filename)}:{line}"
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

    def note_at(self, site: str, verdict, startup: bool = False) -> None:
        """Record a change made once, with no call frame: TorchScript rewrites at their source
        line, or (`startup`) one made as the patches went in, such as an environment variable,
        which is written only if this process goes on to run code that makes a redirected call."""
        self._counters[(None, site, verdict.api)] = [1]
        self.sites.append((site, verdict))
        self._write(f"{site}  {verdict.describe()}", user=not startup)

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
        """Append the summary and announce it on stderr (once; later calls are not logged).
        A process in which no code of its own made a redirected call writes and prints nothing."""
        if self._closed:
            return
        if self._used:
            for line in self.summary_lines():
                self._write(line)
            self._flush(final=True)
            rank, child = os.environ.get("RANK"), _child_part(self._forked)
            if self.announce and rank in (None, "", "0") and child in ("", ".proc0"):
                # one process says it: one started on its own, rank 0, process 0 of an mp.spawn
                where = ""
                if self.path:
                    others = "rank" if rank else "process" if child else ""
                    more = f" (and one per other {others})" if others else ""
                    where = f"; log: {self.path}{more}"
                print(f"torchport: {self.summary_lines()[0][len('# summary: '):]}{where}", file=sys.stderr)
        self._closed = True
        self._pending.clear()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, line: str, user: bool = True) -> None:
        if self._closed:
            return
        if user and not self._used:
            self._used = True
            if self._forked:
                self._close_on_exit()
        if self.requested is None:
            return
        self._pending.append(line)
        if self._used:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        """Write the pending lines, opening the file first if need be: not while a spawned child
        cannot tell yet which process it is, unless `final` (then its pid names it)."""
        if self._file is None:
            if self.path is None:  # no log requested, or it could not be opened
                self._pending.clear()
                return
            if not (final or _named_yet()):
                return
            self._open()
            if self._file is None:
                self._pending.clear()
                return
        for line in self._pending:
            self._file.write(line + "\n")
        self._pending.clear()

    def _open(self) -> None:
        """Open this process's file, named as of now (RANK, the spawn index); if a live process
        holds that name, `<name>.pid<PID>.log`."""
        path = log_path_for_process(self.requested, forked=self._forked)
        if not _named_yet():
            path = _with_pid(path)
        try:
            handle = _take(path)
            if handle is None:
                path = _with_pid(path)
                handle = _take(path)
            if handle is None:
                raise BlockingIOError(0, "another process holds it")
        except OSError as error:
            print(f"torchport: cannot write the log {path}: {error.strerror}", file=sys.stderr)
            self.path = None
            return
        self.path = path
        self._file = handle
        self._file.write(self.header + "\n")

    def _after_fork(self) -> None:
        """In a forked child: drop the parent's file and calls, so that this process writes a
        file of its own (`.pid<PID>`) with its own calls only, and closes it on its way out."""
        if self._closed:
            return
        self._forked = True
        if self._file is not None:
            # Let go of the parent's file without touching the file object (another thread may
            # have held its lock at the fork): its descriptor now points at os.devnull.
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._file.fileno())
                os.close(null)
            except OSError:
                pass
            _ORPHANS.append(self._file)
            self._file = None
        self.path = None if self.requested is None else log_path_for_process(self.requested, forked=True)
        self._used = False
        self._pending.clear()
        self._slots.clear()
        self._counters.clear()
        self.sites.clear()

    def _close_on_exit(self) -> None:
        """A forked multiprocessing child leaves by os._exit, past atexit, but runs the finalizers
        registered after its start (those of before are cleared): close the log in one of them."""
        util = sys.modules.get("multiprocessing.util")
        if util is not None:
            util.Finalize(None, self.close, exitpriority=0)


def _take(path: str):
    """A line-buffered text file for `path`, locked and emptied; None if a live process holds it.

    The file is opened without truncation and emptied only once the lock is ours, so a process
    that comes second never cuts the first one's log short."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # not /dev/stderr, a FIFO: written as they are
            try:
                import fcntl
            except ImportError:  # Windows: no flock; the names are per process all the same
                fcntl = None
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    return None
                except OSError:
                    pass  # a file system without locks: go on unlocked
            os.ftruncate(fd, 0)
        return open(fd, "a", buffering=1, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _with_pid(path: str) -> str:
    stem, ext = os.path.splitext(path)
    suffix = f".pid{os.getpid()}"
    return path if stem.endswith(suffix) else stem + suffix + ext


_LIVE: "weakref.WeakSet[CallLog]" = weakref.WeakSet()
_ORPHANS: list = []  # in a forked child, the file objects of its parent's log, never to be closed


def _forget_parent_logs() -> None:
    for log in list(_LIVE):
        log._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_logs)


def short_path(filename: str) -> str:
    """A path relative to the working directory when the file lies below it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
