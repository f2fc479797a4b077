"""Count what `torchport migrate --from npu` leaves of the NPU in a tree: #26's real-code measure.

    python tools/npu_survey.py TREE [--target cpu] [-o OUT] [--json]

Runs `torchport migrate TREE -o OUT --from npu --target TARGET` as a user would (the console
script, in a process of its own), then reads OUT: in every Python file, what still names the NPU
(an import of torch_npu or torch_npu.*, a `.npu(...)` call, a reference through torch.npu or
torch_npu, or through a name imported from torch_npu, and the old `torch.npu_*` kernels), each
matched against OUT's unsupported_api.csv: a leftover that the report lists is one a person was
told to port; one it does not list is a gap in the conversion (the Done-when figure is 0 of them).

It prints the files, the files skipped and why (a source that is not valid Python apart from an
internal error, which counts as a crash), the crashes, the report's rows per API, the leftovers it
lists (per API) and the ones it does not (file:line and the line), and the wall time of the run.
Exit status: 0 no crash and no unlisted leftover; 1 otherwise; 2 bad input (one line on stderr).
The names (torch_npu, torch.npu, .npu()) are read from the npu target, as the conversion reads them.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

REPORT_FOLDER = "torchport_report"
UNSUPPORTED = "unsupported_api.csv"
SKIPPED = "skipped_files.csv"
OTHER_REPORTS = ("unknown_api.csv", "notes.csv")  # where an unlisted leftover may be told of instead
# skipped_files.csv reasons that are torchport's failure, not the source's
CRASH_MARKS = ("internal error", "the parser crashed", "took longer than", "needs more memory")


class BadInput(Exception):
    """One line for the user; exit status 2."""


@dataclass(frozen=True)
class Leftover:
    file: str  # relative to OUT (= relative to TREE)
    line: int
    kind: str  # import, call, reference, old-kernel, imported-name
    api: str  # the dotted name as the survey spells it, e.g. torch_npu.npu_rms_norm, Tensor.npu
    text: str  # the line of OUT, stripped


@dataclass(frozen=True)
class Row:
    file: str
    start: int
    end: int
    op: str
    tips: str


def npu_names() -> tuple[str, str, str]:
    """(package, device module, tensor method) of the npu target: torch_npu, torch.npu, npu."""
    from torchport import targets

    npu = targets.get("npu")
    return npu.setup_import, npu.device_module, npu.tensor_method


def torchport_command() -> list[str]:
    """The installed console script beside this interpreter, else one on PATH."""
    script = Path(sys.executable).with_name("torchport")
    if script.exists():
        return [str(script)]
    found = shutil.which("torchport")
    if not found:
        raise BadInput("no torchport command beside this Python or on PATH (run from the project's .venv)")
    return [found]


# ---------------------------------------------------------------- finding what is left


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _bindings(tree: ast.Module, package: str) -> dict[str, str]:
    """Local name -> the dotted module or object it stands for, for names bound by imports of
    torch and of `package` (anywhere in the file: imports inside functions and try blocks too)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return {k: v for k, v in bound.items() if v.split(".")[0] in ("torch", package)}


def leftovers(text: str, relative: str, names: tuple[str, str, str]) -> list[Leftover]:
    """What still names the NPU in one file of OUT (raises SyntaxError where it is not Python)."""
    package, device_module, method = names
    tree = ast.parse(text)
    lines = text.splitlines()
    bound = _bindings(tree, package)
    found: list[Leftover] = []

    def add(node: ast.AST, kind: str, api: str) -> None:
        line = getattr(node, "lineno", 0)
        found.append(Leftover(relative, line, kind, api, lines[line - 1].strip() if 0 < line <= len(lines) else ""))

    def is_package(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_package(alias.name):
                    add(node, "import", f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if is_package(node.module):
                add(node, "import", f"from {node.module} import {', '.join(a.name for a in node.names)}")
            elif node.module == "torch" and any(a.name == device_module.split(".")[-1] for a in node.names):
                add(node, "import", f"from torch import {device_module.split('.')[-1]}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
            dotted = _dotted(node.func)
            if dotted is None or _resolve(dotted, bound) is None:  # x.npu(), not torch_npu.npu(...)
                add(node, "call", f"Tensor.{method}")
        elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(parents.get(node), ast.Attribute):
            dotted = _dotted(node)
            resolved = _resolve(dotted, bound) if dotted else None
            if resolved is None:
                continue
            if isinstance(node, ast.Name) and resolved == dotted:  # a bare `torch_npu` (e.g. passed on)
                if is_package(resolved):
                    add(node, "reference", resolved)
                continue
            if is_package(resolved) or resolved == device_module or resolved.startswith(device_module + "."):
                kind = "imported-name" if isinstance(node, ast.Name) else "reference"
                add(node, kind, resolved)
            elif resolved.startswith(f"torch.{method}_"):  # torch.npu_one_hot: torch_npu 1.x's kernels
                add(node, "old-kernel", resolved)
    return sorted(found, key=lambda f: (f.line, f.api))


NPU_TYPE_STRING = re.compile(r"torch\.npu\.\w+Tensor")
NPU_DEVICE_STRING = re.compile(r"npu(:(\d+|\{\w*\}))?")  # "npu", "npu:0", "npu:{}".format(...)


def npu_isms(text: str, relative: str) -> list[Leftover]:
    """Other traces of the NPU, outside the Done-when count: an `npu` keyword argument (e.g.
    torch.autograd.profiler.profile(use_npu=True), which torch refuses, also as a dict key passed on
    as **kwargs), a tensor type name 'torch.npu.HalfTensor', and a device string
    "npu" / "npu:N" / "npu:{}" (torch.device("npu") fails without torch_npu)."""
    tree = ast.parse(text)
    lines = text.splitlines()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg and "npu" in keyword.arg.split("_"):
                    found.append((keyword.value, "npu-keyword", f"{keyword.arg}="))
        elif isinstance(node, ast.Dict):  # {'use_npu': True} passed on as **kwargs
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
                        and "npu" in key.value.split("_"):
                    found.append((key, "npu-keyword", f"{key.value}="))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if NPU_DEVICE_STRING.fullmatch(node.value):
                found.append((node, "npu-device-string", repr(node.value)))
            elif NPU_TYPE_STRING.fullmatch(node.value):  # x.type() == 'torch.npu.HalfTensor'
                found.append((node, "npu-type-string", repr(node.value)))
    result = []
    for node, kind, api in found:
        line = getattr(node, "lineno", 0)
        result.append(Leftover(relative, line, kind, api, lines[line - 1].strip() if 0 < line <= len(lines) else ""))
    return sorted(result, key=lambda f: (f.line, f.api))


def _resolve(dotted: str, bound: dict[str, str]) -> str | None:
    """`dotted` with its first name replaced by what the file's imports bound it to (None: not
    a name from torch or the NPU package)."""
    head, _, rest = dotted.partition(".")
    target = bound.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


# ---------------------------------------------------------------- the report


def read_rows(path: Path) -> list[Row]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return [
            Row(r["File"], _int(r.get("Start Line")), _int(r.get("End Line")), r.get("OP", ""), r.get("Tips", ""))
            for r in csv.DictReader(handle)
        ]


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _last_name(api: str) -> str:
    return api.strip().split("(")[0].rstrip(".").split(".")[-1]


def _names(api: str) -> set[str]:
    """The names a leftover answers to: `from M import a, b` to a and b, `import M.x` to x."""
    if api.startswith("from ") and " import " in api:
        return {name.strip() for name in api.split(" import ", 1)[1].split(",")}
    return {_last_name(api.removeprefix("import "))}


def listed(leftover: Leftover, rows: list[Row]) -> Row | None:
    """The row of unsupported_api.csv that tells of `leftover`: same file, and the same API (its
    last name) or a line range that holds the leftover's line. (Rows are at the lines of the file
    as read, the leftovers at OUT's: the name is what matches when lines moved.)"""
    names = _names(leftover.api)
    for row in rows:
        if _same_file(row.file, leftover.file):
            if _last_name(row.op) in names or row.start <= leftover.line <= max(row.end, row.start):
                return row
    return None


def _same_file(reported: str, relative: str) -> bool:
    reported = reported.replace("\\", "/").lstrip("./")
    return reported == relative or reported.endswith("/" + relative) or relative.endswith("/" + reported)


# ---------------------------------------------------------------- the run


def survey(tree: Path, out: Path, target: str) -> dict:
    command = [*torchport_command(), "migrate", str(tree), "-o", str(out), "--from", "npu", "--target", target]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if run.returncode == 2:
        message = (run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["(no message)"])[-1]
        raise BadInput(f"torchport migrate refused the run: {message}")
    if run.returncode not in (0, 1):
        raise BadInput(f"torchport migrate ended with status {run.returncode}: "
                       f"{(run.stderr.strip().splitlines() or ['(no message)'])[-1]}")
    summary = measure(out, target)
    summary.update(tree=str(tree), command=" ".join(command), migrate_status=run.returncode, wall_s=round(wall, 2))
    return summary


def measure(out: Path, target: str = "cpu") -> dict:
    """The figures of a migrate output folder OUT (its Python files and OUT/torchport_report)."""
    report = out / REPORT_FOLDER
    rows = read_rows(report / UNSUPPORTED)
    skipped = {r["File"].replace("\\", "/"): r["Reason"] for r in _dict_rows(report / SKIPPED)}
    names = npu_names()

    files, lines_total, left, unreadable, isms = 0, 0, [], [], []
    for path in sorted(out.rglob("*.py")):
        relative = path.relative_to(out).as_posix()
        if relative.startswith(REPORT_FOLDER + "/"):
            continue
        files += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        lines_total += text.count("\n")
        try:
            left += leftovers(text, relative, names)
            isms += npu_isms(text, relative)
        except (SyntaxError, ValueError, RecursionError) as error:
            unreadable.append((relative, f"{type(error).__name__}: {error}"))

    skipped_rows, crashes = [], []
    for file, reason in sorted(skipped.items()):
        kind = "crash" if any(mark in reason for mark in CRASH_MARKS) else "source"
        (crashes if kind == "crash" else skipped_rows).append({"file": file, "reason": reason})
    for csv_name in sorted(p.name for p in report.glob("*.csv")) if report.is_dir() else []:
        for r in _dict_rows(report / csv_name):  # a step's internal error, told as a row (e.g. TP4xx/TP3xx)
            message = r.get("Tips") or r.get("Message") or r.get("Advice") or ""
            if "internal error" in message:
                crashes.append({"file": r.get("File", ""), "reason": f"{csv_name}: {message}"})
    skipped_files = {s["file"] for s in skipped_rows} | {c["file"] for c in crashes}
    # a file OUT holds unchanged because its source is not Python is skipped, not a broken output
    broken = [{"file": f, "reason": why} for f, why in unreadable if not any(_same_file(s, f) for s in skipped_files)]

    others = {name: read_rows(report / name) for name in OTHER_REPORTS}
    matched, unlisted = Counter(), []
    for item in left:
        row = listed(item, rows)
        if row is None:
            elsewhere = [name for name, other in others.items() if listed(item, other) is not None]
            unlisted.append({**asdict(item), "elsewhere": elsewhere})
        else:
            matched[row.op] += 1
    return {
        "tree": None,
        "out": str(out),
        "target": target,
        "command": None,
        "migrate_status": None,
        "wall_s": None,
        "python_files": files,
        "lines": lines_total,
        "skipped": skipped_rows,
        "crashes": crashes,
        "output_not_python": broken,
        "report_rows_per_api": dict(sorted(Counter(r.op for r in rows).items(), key=lambda kv: (-kv[1], kv[0]))),
        "listed_leftovers_per_api": dict(sorted(matched.items(), key=lambda kv: (-kv[1], kv[0]))),
        "leftovers": len(left),
        "unlisted": unlisted,
        "unlisted_per_api": dict(sorted(Counter(u["api"] for u in unlisted).items(), key=lambda kv: (-kv[1], kv[0]))),
        "other_npu_isms": [asdict(i) for i in isms],
    }


def _dict_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def print_summary(summary: dict, file=sys.stdout) -> None:
    say = lambda text="": print(text, file=file)  # noqa: E731
    say(f"tree: {summary['tree']}  ->  {summary['out']}  (--target {summary['target']})")
    say(f"python files: {summary['python_files']}, {summary['lines']} lines; migrate exit {summary['migrate_status']}; "
        f"wall time {summary['wall_s']} s")
    say(f"skipped (the source's own problem): {len(summary['skipped'])}")
    for s in summary["skipped"]:
        say(f"  {s['file']}: {s['reason']}")
    say(f"crashes: {len(summary['crashes'])}")
    for c in summary["crashes"]:
        say(f"  {c['file']}: {c['reason']}")
    if summary["output_not_python"]:
        say(f"outputs that are not valid Python: {len(summary['output_not_python'])}")
        for b in summary["output_not_python"]:
            say(f"  {b['file']}: {b['reason']}")
    rows = summary["report_rows_per_api"]
    say(f"unsupported_api.csv rows: {sum(rows.values())}")
    for api, count in rows.items():
        say(f"  {count:5d}  {api}")
    matched = summary["listed_leftovers_per_api"]
    say(f"NPU leftovers: {summary['leftovers']}; listed in unsupported_api.csv: {sum(matched.values())}")
    for api, count in matched.items():
        say(f"  {count:5d}  {api}")
    say(f"NPU leftovers NOT listed: {len(summary['unlisted'])}")
    for api, count in summary["unlisted_per_api"].items():
        say(f"  {count:5d}  {api}")
    for u in summary["unlisted"]:
        also = f" (in {', '.join(u['elsewhere'])})" if u["elsewhere"] else ""
        say(f"  {u['file']}:{u['line']}: [{u['kind']}] {u['api']}{also}: {u['text']}")
    isms = summary.get("other_npu_isms", [])
    if isms:
        say(f"other NPU traces (not in the count above): {len(isms)}")
        for i in isms:
            say(f"  {i['file']}:{i['line']}: [{i['kind']}] {i['api']}: {i['text']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", help="a folder of NPU training code (read-only)")
    parser.add_argument("--target", default="cpu", help="what to migrate to (default: cpu)")
    parser.add_argument("-o", "--out", help="where migrate writes (default: a new temporary folder, kept)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead")
    args = parser.parse_args(argv)
    try:
        tree = Path(args.tree)
        if not tree.is_dir():
            raise BadInput(f"{tree}: not a folder")
        if not any(tree.rglob("*.py")):
            raise BadInput(f"{tree}: has no Python file")
        out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="npu_survey_")) / "out"
        summary = survey(tree.resolve(), out.resolve(), args.target)
    except BadInput as error:
        print(f"npu_survey: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print_summary(summary)
    return 0 if not summary["unlisted"] and not summary["crashes"] and not summary["output_not_python"] else 1


if __name__ == "__main__":
    sys.exit(main())
