"""The files that are not Python are copied while the workers migrate, and an interrupt stops them."""

import threading
import time
from pathlib import Path

import pytest

from torchport.migrate.engine import Copier, Outcome


class SlowWriter:
    """Stands in for engine.Writer: records each copy, skipping the names that say so."""

    def __init__(self, outcome=None, done=None, delay=0.0):
        self.outcome, self.done, self.delay = outcome, done if done is not None else [], delay

    def reporting_to(self, outcome):
        return SlowWriter(outcome, self.done, self.delay)

    def copy(self, origin, name):
        time.sleep(self.delay)
        if name.startswith("bad"):
            self.outcome.skipped.append((name, "could not be copied"))
        else:
            self.done.append(name)
            self.outcome.written += 1


def test_copies_are_made_on_another_thread_and_their_rows_merged_where_they_were_listed():
    outcome = Outcome()
    outcome.skipped.append(("scan.txt", "a link loop"))
    writer = SlowWriter()
    copies = [(Path("in"), name) for name in ("a.bin", "bad.bin", "c.bin")]
    with Copier(writer, copies, outcome) as copier:
        assert copier.thread.name == "torchport-copy" and copier.thread is not threading.current_thread()
        outcome.skipped.append(("x.py", "not valid Python"))  # (the workers' rows, meanwhile)
    assert writer.done == ["a.bin", "c.bin"] and outcome.written == 2
    assert outcome.skipped == [("scan.txt", "a link loop"), ("bad.bin", "could not be copied"), ("x.py", "not valid Python")]


def test_an_interrupt_stops_the_copies_after_the_one_in_progress():
    outcome = Outcome()
    writer = SlowWriter(delay=0.05)
    copies = [(Path("in"), f"{i}.bin") for i in range(100)]
    with pytest.raises(KeyboardInterrupt):
        with Copier(writer, copies, outcome):
            time.sleep(0.12)
            raise KeyboardInterrupt
    assert 1 <= len(writer.done) < 10 and outcome.written == len(writer.done)
