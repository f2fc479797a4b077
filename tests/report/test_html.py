"""index.html: the overview and the side-by-side diffs, escaped; written by migrate and analyze."""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

from _report_page import HOSTILE, HOSTILE_NAME, UNSUPPORTED_API, make_tree, read_page, target_without_graphs

from torchport.findings import Finding, Operation
from torchport.migrate import engine
from torchport.report.html import HtmlReport, _opcodes, side_by_side


def _finding(line: int, operation: Operation, code: str = "TP004", end: int | None = None) -> Finding:
    return Finding("f.py", line, end or line, code, operation, f"{code} at {line}")


def test_a_change_is_a_row_of_both_sides_with_its_rule_and_context_around_it():
    old = [f"line {n}" for n in range(1, 21)]
    new = old[:9] + ["line 10, changed"] + old[10:]
    rows, cut = side_by_side(old, new, [_finding(10, Operation.MODIFY)])
    assert not cut
    assert [row.kind for row in rows] == ["gap", "same", "same", "same", "changed", "same", "same", "same", "gap"]
    assert (rows[0].skipped, rows[-1].skipped) == (6, 7)
    changed = rows[4]
    assert (changed.old_number, changed.old, changed.new_number, changed.new) == (10, "line 10", 10, "line 10, changed")
    assert [f.code for f in changed.findings] == ["TP004"]


def test_an_inserted_line_carries_the_finding_of_its_line_in_the_new_file():
    old = ["import torch", "x = 1"]
    new = ["import torch", "import torch_npu", "x = 1"]
    rows, _ = side_by_side(old, new, [_finding(2, Operation.INSERT, "TP000")])
    inserted = next(row for row in rows if row.kind == "changed")
    assert (inserted.old_number, inserted.new_number, inserted.new) == (None, 2, "import torch_npu")
    assert [f.code for f in inserted.findings] == ["TP000"]


def test_an_unsupported_line_far_from_any_change_is_shown_and_marked():
    old = [f"line {n}" for n in range(1, 41)]
    new = ["line 1, changed"] + old[1:]
    rows, _ = side_by_side(old, new, [_finding(1, Operation.MODIFY), _finding(30, Operation.UNSUPPORTED)])
    marked = [row for row in rows if row.unsupported]
    assert [(row.kind, row.old_number, row.new_number) for row in marked] == [("same", 30, 30)]
    numbers = [row.old_number for row in rows if row.kind == "same"]
    assert numbers == [2, 3, 4, 27, 28, 29, 30, 31, 32, 33]
    assert [row.skipped for row in rows if row.kind == "gap"] == [22, 7]


def test_user_text_is_escaped_everywhere_and_only_the_page_script_is_a_script(tmp_path):
    report = HtmlReport()
    source = f"import torch\n# {HOSTILE}\nNAME = '{HOSTILE}'\nx.cuda()\n"
    finding = Finding(HOSTILE_NAME, 4, 4, "TP003", Operation.MODIFY, f"message {HOSTILE}", api=HOSTILE)
    unsupported = Finding(HOSTILE_NAME, 3, 3, "TP004", Operation.UNSUPPORTED, f"tip {HOSTILE}", api=HOSTILE)
    report.add(HOSTILE_NAME, source, source.replace("x.cuda()", "x.to('npu')"), [finding, unsupported])
    summary = {**_summary(), "source": [f"src/{HOSTILE}"], "skipped": [{"file": HOSTILE, "reason": HOSTILE}]}
    html = report.write(tmp_path, [finding, unsupported], summary, {"TP003": HOSTILE}).read_text(encoding="utf-8")
    assert "<script>alert" not in html and "x<script>y" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8  # comment, string, message x2, api, title, source, skipped
    page = read_page(html)
    assert page.scripts == 1
    assert list(page.files) == [HOSTILE_NAME]  # (the reader unescapes: the name as written)
    assert any(f"# {HOSTILE}" in row.cells for row in page.files[HOSTILE_NAME])


def test_the_page_allows_no_load_and_no_script_but_its_own(tmp_path):
    html = HtmlReport().write(tmp_path, [], _summary(), {}).read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in policy and "'unsafe-inline'" not in policy.partition("script-src")[2]
    assert "http://" not in html and "https://" not in html


def test_a_long_diff_stops_at_its_limit_and_says_so(tmp_path):
    old = [f"x{n}.cuda()" for n in range(1, 101)]
    new = [f"x{n}.to(d)" for n in range(1, 101)]
    findings = [_finding(n, Operation.MODIFY) for n in range(1, 101)]
    rows, cut = side_by_side(old, new, findings, limit=10)
    assert cut and [row.old_number for row in rows] == list(range(1, 11))
    assert [f.start_line for row in rows for f in row.findings] == list(range(1, 11))
    report = HtmlReport(max_file_rows=10)
    report.add("f.py", "\n".join(old), "\n".join(new), findings)
    html = report.write(tmp_path, findings, _summary(), {}).read_text(encoding="utf-8")
    assert "goes on past these 10 rows" in html


def test_files_beyond_the_cap_are_named_not_drawn(tmp_path):
    report = HtmlReport(max_files=1)
    findings = [Finding(name, 1, 1, "TP003", Operation.MODIFY, "m") for name in ("a.py", "b.py")]
    for finding in findings:
        report.add(finding.file, "x.cuda()\n", "x.to(d)\n", [finding])
    page = read_page(report.write(tmp_path, findings, _summary(), {}).read_text(encoding="utf-8"))
    assert list(page.files) == ["a.py"]
    assert "1 more files with findings" in "".join(page.text) and "b.py" in page.text


def test_migrate_writes_the_page_with_a_row_for_every_change_it_lists(tmp_path):
    src = make_tree(tmp_path / "src")
    out = tmp_path / "out"
    engine.run(engine.Options(sources=[src], out=out, target=target_without_graphs()))
    report = out / engine.REPORT_DIR
    page = read_page((report / "index.html").read_text(encoding="utf-8"))
    with open(report / "change_list.csv", newline="", encoding="utf-8") as handle:
        changes = list(csv.DictReader(handle))
    assert {row["File"] for row in changes} == {"train.py", HOSTILE_NAME} == set(page.files)
    for change in changes:
        codes = [code for row in page.files[change["File"]] if "changed" in row.classes for code in row.tags]
        assert change["Rule"] in codes, change
    marked = [row for row in page.files[HOSTILE_NAME] if "unsupported" in row.classes]
    assert [row.old_number for row in marked] == ["4"] and UNSUPPORTED_API in marked[0].cells[1]


def test_analyze_writes_the_page_and_says_nothing_was_rewritten(cli, tmp_path):
    src = make_tree(tmp_path / "src")
    status, _, _ = cli("analyze", src, "-o", tmp_path / "out", "-t", target_without_graphs(), "-m", "apis", "-q")
    html = (tmp_path / "out" / engine.REPORT_DIR / "index.html").read_text(encoding="utf-8")
    assert status == 0 and "nothing was rewritten" in html
    assert "unsupported" in {c for row in read_page(html).files[HOSTILE_NAME] for c in row.classes}


def _summary() -> dict:
    figures = ("python_files", "files_changed", "unsupported", "unknown", "notes", "precision_advice",
               "performance_advice", "affinity")
    return {"target": "t", "source": ["src"], "output": "out", "skipped": [], **dict.fromkeys(figures, 0)}


def test_the_diff_turns_the_old_lines_into_the_new_whatever_moves_and_repeats():
    rng = random.Random(25)
    words = ["import torch", "", "x.cuda()", "pass", "return y", "a = 1", "b = 2", "c = 3"]
    for _ in range(300):
        old = [rng.choice(words) + (str(rng.randrange(30)) if rng.random() < 0.5 else "") for _ in range(rng.randrange(40))]
        new = [line for line in old if rng.random() < 0.8]
        for _ in range(rng.randrange(6)):
            new.insert(rng.randrange(len(new) + 1), rng.choice(old or words))
        rebuilt, position = [], (0, 0)
        for tag, i1, i2, j1, j2 in _opcodes(old, new):
            assert (i1, j1) == position and tag in ("equal", "replace", "delete", "insert")
            assert tag != "equal" or old[i1:i2] == new[j1:j2]
            rebuilt += new[j1:j2]
            position = (i2, j2)
        assert position == (len(old), len(new)) and rebuilt == new


def test_a_change_named_at_an_unchanged_line_goes_to_the_nearest_change_in_the_file_as_read():
    old = [f"line {n}" for n in range(1, 11)]
    new = ["line 1", "line 2, changed"] + old[2:8] + ["set up 1", "set up 2"] + old[8:]
    rows, _ = side_by_side(old, new, [_finding(2, Operation.MODIFY, "TP003"), _finding(8, Operation.MODIFY, "TP201")])
    placed = {f.code: (row.old_number, row.new_number) for row in rows for f in row.findings}
    assert placed == {"TP003": (2, 2), "TP201": (None, 9)}
