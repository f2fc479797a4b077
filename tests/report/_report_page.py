"""A small tree for the HTML report's tests (a change, an unsupported call, and `<script>` in a
file's name, a string and a comment), and a reader of the page's diff tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from torchport import targets
from torchport.targets.verdict import Kind

HOSTILE = "<script>alert(1)</script>"
HOSTILE_NAME = "x<script>y.py"  # (no "/" in a file's name)
UNSUPPORTED_API = "torch.cuda.make_graphed_callables"

TRAIN = (
    "import torch\n"
    "\n"
    "\n"
    "def step(model, x):\n"
    "    model = model.cuda()\n"
    "    torch.cuda.synchronize()\n"
    "    return model(x)\n"
)
HOSTILE_SOURCE = (
    "import torch\n"
    f"# {HOSTILE}\n"
    f"NAME = \"{HOSTILE}\"\n"
    "graphed = torch.cuda.make_graphed_callables(model, (x,))\n"
    "y = x.cuda()\n"
)


def target_without_graphs() -> str:
    """A target on which the hostile file's call is unsupported (asked of the targets, not named)."""
    return next(name for name in targets.names() if targets.get(name).verdict(UNSUPPORTED_API).kind is Kind.UNSUPPORTED)


def make_tree(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / HOSTILE_NAME).write_text(HOSTILE_SOURCE, encoding="utf-8")
    (root / "plain.py").write_text("print('no CUDA here')\n", encoding="utf-8")
    return root


@dataclass
class TableRow:
    classes: set[str]
    cells: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # the rule codes on the row

    @property
    def old_number(self) -> str:
        return self.cells[0]

    @property
    def new_number(self) -> str:
        return self.cells[2]


class PageReader(HTMLParser):
    """Each file section's name and diff rows; the page's script elements; its text."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, list[TableRow]] = {}
        self.scripts = 0
        self.text: list[str] = []
        self._file: str | None = None
        self._row: TableRow | None = None
        self._cell: list[str] | None = None
        self._tag = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "script":
            self.scripts += 1
        elif tag == "section" and "file" in classes:
            self._file = attrs["data-name"]
            self.files[self._file] = []
        elif tag == "tr" and self._file is not None:
            self._row = TableRow(classes)
            self.files[self._file].append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "span" and "tag" in classes and self._row is not None:
            self._tag = True

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.cells.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "section":
            self._file = None
        elif tag == "span":
            self._tag = False

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._tag:
            self._row.tags.append(data)


def read_page(html: str) -> PageReader:
    reader = PageReader()
    reader.feed(html)
    return reader
