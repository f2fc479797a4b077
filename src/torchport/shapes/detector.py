"""`DETECTOR`: Ascend's dynamic-shape detector, under the same names, on TorchFunctionMode.

    from torchport.shapes import DETECTOR
    for batch in DETECTOR.start(loader):      # Ascend's one-line edit; `torchport shapes` makes it
        ...                                   # every torch call of the step is recorded
    # at exit (or DETECTOR.save()): dynamic_shape_report.csv, the dynamic call sites only

One iteration of the wrapped loop is one step. A call site is dynamic when the shapes it sees
differ from step to step (see sites.py). A step cut short by an exception or a `break` is left
out; the steps before it are reported, also when the script then dies. A loop wrapped inside
another wrapped loop is not recorded apart: the outer loop's steps contain it.
"""

from __future__ import annotations

import atexit
import os
import sys

from torchport.shapes.signatures import shapes_of, tensor_paths
from torchport.shapes.sites import BATCH

REPORT = "dynamic_shape_report.csv"
SETTINGS = ("report", "include_static", "max_steps", "exit_at_limit", "save_at_exit")


class StepLimit(BaseException):
    """Raised out of the wrapped loop when `exit_at_limit` is set and `max_steps` steps are done:
    a BaseException, so that the script's `except Exception` does not swallow it."""


class ShapeDetector:
    """Records the shapes of every torch call made by the user's code, step by step."""

    recorder_class = None  # a Recorder subclass to use instead (bench/shapes.py keys sites Ascend's way)

    def __init__(self, report: str = REPORT, include_static: bool = False, max_steps: int | None = None,
                 exit_at_limit: bool = False, save_at_exit: bool = True) -> None:
        self.report = report  # the CSV's path; a process of a torchrun launch adds .rank<N>
        self.include_static = include_static  # --all: list the static sites too, marked
        self.max_steps = max_steps  # steps in all, over every wrapped loop
        self.exit_at_limit = exit_at_limit  # at the limit, stop the program (else: end the loop)
        self.save_at_exit = save_at_exit  # write the report at exit if steps were recorded since the last save
        self._at_exit = False
        self.reset()

    def reset(self) -> None:
        """Forget every step recorded (the settings stay)."""
        self._recorder = None
        self._capture = None
        self._active = False
        self._saved_at = None  # the step count at the last save
        self.last_report: str | None = None

    def configure(self, **settings) -> "ShapeDetector":
        for name, value in settings.items():
            if name not in SETTINGS:
                raise TypeError(f"ShapeDetector has no setting {name!r}")
            setattr(self, name, value)
        return self

    @property
    def steps(self) -> int:
        return 0 if self._recorder is None else self._recorder.iteration

    @property
    def sites(self) -> list:
        return [] if self._recorder is None else list(self._recorder.sites.values())

    # --- the loop --------------------------------------------------------------------------

    def start(self, iterable, max_steps: int | None = None):
        """Ascend's loop wrapper: `for batch in DETECTOR.start(loader):` yields what `loader` does
        and records each step; `max_steps` ends this loop after that many steps."""
        return self._steps(iterable, max_steps)

    def hook_func(self, func, name, call_number, *args, **kwargs):
        """Ascend's per-call hook, for scripts that its analyzer rewrote: the call is made as it
        is (the mode records it anyway)."""
        return func(*args, **kwargs)

    def _steps(self, iterable, max_steps):
        if self._active:  # a wrapped loop inside a wrapped loop: the outer one records
            yield from iterable
            return
        self._begin()
        recorder, capture = self._recorder, self._capture
        self._active = True
        capture.attach()
        done = 0
        try:
            iterator = iter(iterable)
            while not self._limit_reached(done, max_steps):
                try:
                    batch = next(iterator)
                except StopIteration:
                    return
                self._note_batch(batch, sys._getframe(1))
                recorder.recording = True
                capture.enter_step()
                completed = False
                try:
                    yield batch
                    completed = True
                finally:
                    recorder.recording = False
                    capture.leave_step()
                    recorder.finish(completed)
                done += 1
        finally:
            capture.detach()
            self._active = False

    def _begin(self) -> None:
        if self._recorder is None:
            from torchport.shapes.capture import Capture, Recorder

            self._recorder = (self.recorder_class or Recorder)()
            self._capture = Capture(self._recorder)
            self._check_report()
            if not self._at_exit:
                self._at_exit = True
                atexit.register(self._save_at_exit)

    def _check_report(self) -> None:
        """A report path that cannot be written is said at the first step, not after the run (which
        goes on: the detector, used by hand, must not end a training); `torchport shapes` has
        checked it before the script started."""
        from torchport.errors import UsageError
        from torchport.report.destination import output_file

        if not self.save_at_exit:
            return
        try:
            output_file(self._report_path(), "DETECTOR.report")
        except UsageError as error:
            print(f"torchport shapes: the report will not be written: {error}", file=sys.stderr)

    def _limit_reached(self, done: int, max_steps: int | None) -> bool:
        if self.max_steps is not None and self.steps >= self.max_steps:
            if self.exit_at_limit:
                raise StepLimit(self.steps)
            return True
        return max_steps is not None and done >= max_steps

    def _note_batch(self, batch, frame) -> None:
        """The loader's batch is a site of its own, at the `for` line: its varying dims are what
        bucketing and `mark_dynamic` act on."""
        recorder = self._recorder
        frame = recorder.callsites.user_frame(frame)
        if frame is None:
            return
        key = ("batch", id(frame.f_code), frame.f_lasti)
        site = recorder.sites.get(key)
        if site is None:  # the tensors' names, from the first batch
            paths = [path for path, _ in tensor_paths(batch, recorder.tensor)]
            site = recorder.sites[key] = recorder.new_site(frame, BATCH, paths)
        site.seen_in = recorder.iteration
        site.current = {((), shapes_of(batch, recorder.tensor))}
        recorder.touched.append(site)

    # --- the report ------------------------------------------------------------------------

    def save(self, path: str | None = None) -> str:
        """Write the report (CSV) and return its path: `path`, else the configured one, with
        .rank<N> added in a torchrun-style launch (as `torchport run` names its logs)."""
        from torchport.shapes.report import write_csv

        target = self._report_path(path)
        write_csv(target, self.sites, self.include_static)
        self._saved_at = self.steps
        self.last_report = target
        return target

    def _report_path(self, path: str | None = None) -> str:
        from torchport.runtime.calllog import log_path_for_process

        return log_path_for_process(os.path.abspath(os.fspath(path or self.report)))

    def summary(self, report_path: str | None = None) -> str:
        from torchport.shapes.report import summary

        return summary(self.sites, self.steps, report_path or self.last_report)

    def _save_at_exit(self) -> None:
        if not self.save_at_exit or self._recorder is None or self._saved_at == self.steps:
            return
        try:
            written = self.save()
        except OSError as error:
            print(f"torchport shapes: the report could not be written: {error}", file=sys.stderr)
            return
        if prints_here():
            print(self.summary(written), file=sys.stderr)


def prints_here() -> bool:
    """Whether this process prints the summary: one on its own, or rank 0 of a torchrun-style
    launch (every rank writes its report; one terminal line is enough)."""
    return os.environ.get("RANK") in (None, "", "0")


DETECTOR = ShapeDetector()
