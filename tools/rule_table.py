"""Write the README's rule table from the rule registry, so that a new rule needs no README edit.

    python tools/rule_table.py           # rewrite the table in README.md
    python tools/rule_table.py --check   # exit 1, changing nothing, if the table is not current

One row a code, in code order: each rule's `readme` (declared on its class), and TP000, the
import tidying that runs after the rules (`codes.IMPORT_README`). The table lies between the
two marker lines below, which README.md keeps.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN = "<!-- rule table: written by tools/rule_table.py from each rule's `readme` -->"
END = "<!-- end of rule table -->"


def rows() -> list[tuple[str, str]]:
    """(code, text) for every code, in code order; a rule's text on one line (its class keeps it
    wrapped)."""
    from torchport.migrate.rules import RULES
    from torchport.migrate.codes import IMPORT_CODE, IMPORT_README

    declared = [(IMPORT_CODE, IMPORT_README), *((rule.code, rule.readme) for rule in RULES)]
    return sorted((code, " ".join(text.split())) for code, text in declared)


def table() -> str:
    lines = ["| code | rule |", "| --- | --- |", *(f"| {code} | {text} |" for code, text in rows())]
    return "\n".join(lines) + "\n"


def with_table(readme: str) -> str:
    """`readme` with the table between its markers written anew."""
    if BEGIN not in readme or END not in readme:
        raise ValueError(f"README.md lacks the rule table's markers ({BEGIN!r} ... {END!r})")
    before, rest = readme.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{table()}{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether README.md's table is current")
    args = parser.parse_args(argv)
    current = README.read_text(encoding="utf-8")
    wanted = with_table(current)
    if args.check:
        if wanted != current:
            print("README.md's rule table is out of date: run tools/rule_table.py", file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        README.write_text(wanted, encoding="utf-8")
        print(f"wrote the rule table ({len(rows())} rows) into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
