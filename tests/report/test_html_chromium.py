"""index.html in a real headless Chromium (Debian's `chromium`; .ci/run installs it): the page
loads with no console message at all (an error, a blocked load or script, a log line), its
screenshot is taken, and the DOM the browser built holds the expected diff rows and no script of
the user's.

Chromium's own command line does it in one launch (`--dump-dom` and `--screenshot` together,
console messages on stderr through `--enable-logging=stderr`): no driver, no Python package."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _report_page import HOSTILE, HOSTILE_NAME, UNSUPPORTED_API, make_tree, read_page, target_without_graphs

from torchport.migrate import engine

pytestmark = pytest.mark.fidelity

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
CONSOLE = re.compile(r":CONSOLE[:(]")  # how Chromium logs what a page writes to its console


def _browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("CI has no chromium: .ci/run installs it (apt-get install -y chromium)")
    pytest.skip("no chromium here, and this machine cannot install it for the test: apt-get install -y chromium")


def open_in_chromium(page: Path, folder: Path) -> tuple[str, str, Path]:
    """(the DOM after load, what Chromium logged, the screenshot) of `page`."""
    screenshot = folder / "screenshot.png"
    run = subprocess.run(
        [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={folder / 'profile'}",
         "--enable-logging=stderr", "--v=0", "--window-size=1400,2000", f"--screenshot={screenshot}", "--dump-dom",
         page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout, run.stderr, screenshot


def test_the_harness_sees_a_console_error_and_a_blocked_load(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'unsafe-inline\'">'
                      '<img src="https://example.com/x.png"><script>undefinedFunction()</script>', encoding="utf-8")
    _, log, _ = open_in_chromium(broken, tmp_path)
    said = [line for line in log.splitlines() if CONSOLE.search(line)]
    assert any("Content Security Policy" in line for line in said) and any("ReferenceError" in line for line in said), log


def test_the_report_loads_clean_and_shows_its_diff_rows(tmp_path):
    out = tmp_path / "out"
    engine.run(engine.Options(sources=[make_tree(tmp_path / "src")], out=out, target=target_without_graphs()))
    report = out / engine.REPORT_DIR
    dom, log, screenshot = open_in_chromium(report / "index.html", tmp_path)

    assert not [line for line in log.splitlines() if CONSOLE.search(line)]
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000
    page = read_page(dom)
    assert page.scripts == 1  # the page's own: no <script> of the user's became an element
    assert "2 of 2 files" in page.text  # its script ran (it counts the files: plain.py has no finding)
    with open(report / "change_list.csv", newline="", encoding="utf-8") as handle:
        changes = sorted((row["File"], int(row["Start Line"]), row["Rule"]) for row in csv.DictReader(handle))
    shown = sorted((name, int(row.old_number or row.new_number), code)
                   for name, rows in page.files.items() for row in rows if "changed" in row.classes for code in row.tags)
    assert shown == changes
    hostile = page.files[HOSTILE_NAME]
    assert [(row.old_number, row.cells[1]) for row in hostile if "unsupported" in row.classes] == [
        ("4", f"graphed = {UNSUPPORTED_API}(model, (x,))")]
    assert [row.cells[1] for row in hostile[:3]] == ["import torch", f"# {HOSTILE}", f'NAME = "{HOSTILE}"']
