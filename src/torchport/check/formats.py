"""How `torchport check` prints its findings: text (ruff's `path:line:col: CODE message`), json,
sarif (2.1.0, for GitHub code scanning) and github (workflow annotations)."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from urllib.parse import quote
from dataclasses import dataclass

from torchport import __version__
from torchport.findings import Operation

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Row:
    """One finding as check prints it: where (a path a person can open), what, and how bad."""

    path: str
    line: int
    column: int  # 1-based: the first character of the line's code (torchport tracks lines, not columns)
    end_line: int
    code: str
    message: str
    operation: Operation

    @property
    def unsupported(self) -> bool:
        return self.operation is Operation.UNSUPPORTED


def text(rows: list[Row]) -> str:
    return "".join(f"{r.path}:{r.line}:{r.column}: {r.code} {r.message}\n" for r in rows)


def as_json(rows: list[Row], summary: dict) -> str:
    findings = [
        {"file": r.path, "line": r.line, "column": r.column, "end_line": r.end_line, "code": r.code,
         "operation": r.operation.value, "message": r.message}
        for r in rows
    ]
    return json.dumps({"findings": findings, "summary": summary}, indent=2) + "\n"


def sarif(rows: list[Row], titles: dict[str, str]) -> str:
    codes = sorted({r.code for r in rows})
    index = {code: i for i, code in enumerate(codes)}
    rules = [{"id": code, "shortDescription": {"text": titles.get(code) or code}} for code in codes]
    results = [
        {
            "ruleId": r.code,
            "ruleIndex": index[r.code],
            "level": "error" if r.unsupported else "warning",
            "message": {"text": r.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(r.path)},
                "region": {"startLine": r.line, "startColumn": r.column, "endLine": max(r.end_line, r.line)},
            }}],
        }
        for r in rows
    ]
    driver = {"name": "torchport", "version": __version__, "rules": rules}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
    return json.dumps(log, indent=2) + "\n"


def _uri(path: str) -> str:
    """A SARIF artifact URI: relative paths stay relative (code scanning reads them against the
    checkout), each part escaped; an absolute path becomes a file: URI."""
    if PurePath(path).is_absolute():
        return Path(path).as_uri()
    return quote(PurePath(path).as_posix())


def github(rows: list[Row]) -> str:
    """GitHub Actions workflow commands: each finding an annotation on its line of the pull request."""
    return "".join(
        f"::warning file={_property(r.path)},line={r.line},col={r.column},title={_property(r.code)}::{_data(r.message)}\n"
        for r in rows
    )


def _data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit escapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
