"""Compare two dumps (torchport dump) call by call, and name the first call that parts.

Calls, module calls and the project's own torch calls alike, are lined up by step, phase
(forward, then the backward gradients), module path, API (a torch call's: `torch.nn.functional.gelu`
in the module whose forward made it), call count and output index, in the execution order of A:
the first call that parts may be a module or a torch call, named with the project's line. Per
call: cosine similarity, the largest absolute and relative error, the relative error of the whole
(|A - B| / |A|), and the share of elements whose relative error passes 1/1000 and 5/1000, over the
512-element sample, or over every element where both dumps kept the whole tensor (dump --tensors,
and the modules' calls alone). A call diverges when its relative error passes the tolerance of
its lowest precision (float32 1e-4, float16 2^-6, bfloat16 2^-3; a call that ran under autocast is
judged at the autocast dtype: float32 against bfloat16 autocast is a finding, "lower precision,
as expected", not a divergence), or when NaN or Inf appears on one side only.
Steps are counted from 1. Also: where NaN or Inf first appears, the step where the losses or
gradient norms part beyond the run's precision, and every setting that differs.

Columns (-o DIR/compare.csv, and the same as DIR/compare.html): Step, Phase, Module, API (empty
for a module call), Call, Output, Source (the project's line that made the call), Dtype A,
Dtype B, Elements (those measured), Cosine, Max Abs Error, Max Rel Error, Rel Error,
Beyond 1/1000, Beyond 5/1000, Tolerance, Verdict, Why.

examples:
  torchport compare cuda_on_cpu migrated                 the first divergent call, in one line
  torchport compare fp32 bf16 -o report                  every call in report/compare.csv and .html

exit status: 0 within tolerance; 1 a divergence (a call, the losses or the gradient norms);
2 bad input (a folder that is not a dump).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys

from torchport.report.destination import RULE, output_folder

COLUMNS = ["Step", "Phase", "Module", "API", "Call", "Output", "Source", "Dtype A", "Dtype B", "Elements", "Cosine",
           "Max Abs Error", "Max Rel Error", "Rel Error", "Beyond 1/1000", "Beyond 5/1000", "Tolerance", "Verdict", "Why"]
NUMERIC = range(COLUMNS.index("Elements"), COLUMNS.index("Tolerance"))  # right-aligned in the HTML
SHOWN = 10  # divergent calls printed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="a dump folder (the reference)")
    parser.add_argument("b", metavar="B", help="another dump folder")
    parser.add_argument("-o", "--output", metavar="DIR", help=f"also write DIR/compare.csv and DIR/compare.html ({RULE})")


def main(args: argparse.Namespace) -> int:
    from torchport.runtime.command import require_torch

    require_torch()
    from torchport.precision import dumpfile
    from torchport.precision.compare import compare

    if args.output:
        output_folder(args.output, "-o")
    a, b = dumpfile.read(args.a), dumpfile.read(args.b)
    result = compare(a, b)
    if not result.rows:
        print(f"torchport compare: {args.a} and {args.b} share no call (only A: {result.only_a}, "
              f"only B: {result.only_b}): not runs of the same model", file=sys.stderr)
        return 1
    for line in _lines(result):
        print(line)
    summary = _summary(result)
    print(f"torchport compare: {summary}")
    if args.output:
        _write(args.output, args.a, args.b, result, summary)
    return 1 if result.diverges else 0


def _lines(result) -> list[str]:
    lines = []
    for row in result.divergent[:SHOWN]:
        lines.append(f"  diverges  {row.name}  {row.source}  {row.why}")
    if len(result.divergent) > SHOWN:
        lines.append(f"  ... and {len(result.divergent) - SHOWN} more divergent calls")
    found = [row for row in result.rows if row.verdict == "lower precision, as expected"]
    if found:
        worst = max(found, key=lambda row: row.measures["rel_norm"])
        lines.append(f"  finding   {len(found)} calls computed at lower precision, as expected (largest relative "
                     f"error {worst.measures['rel_norm']:.2e} at {worst.name}, within {worst.tolerance:.1e})")
    if result.nonfinite is not None:
        lines.append(f"  NaN/Inf   first at {result.nonfinite.name}  {result.nonfinite.source}  {result.nonfinite.why}")
    if result.losses_part is not None:
        step, loss_a, loss_b = result.losses_part
        lines.append(f"  losses    part at step {step + 1}: {loss_a:.6g} against {loss_b:.6g}")
    if result.norms_part is not None:
        step, name, norm_a, norm_b = result.norms_part
        lines.append(f"  gradients part at step {step + 1}: {name} norm {norm_a:.6g} against {norm_b:.6g}")
    for name, value_a, value_b in result.settings:
        lines.append(f"  setting   {name}: {value_a!r} against {value_b!r}")
    return lines


def _summary(result) -> str:
    count = f"{len(result.rows)} calls compared at {result.run_precision}"
    unmatched = f", {result.only_a} only in A, {result.only_b} only in B" if result.only_a or result.only_b else ""
    if result.first is not None:
        first = result.first
        return (f"{len(result.divergent)} of {count} diverge{unmatched}; first: {first.name} "
                f"({first.source}): {first.why}")
    if result.diverges:
        return f"every call within tolerance ({count}{unmatched}), but the losses or gradient norms part"
    return f"no divergence ({count}{unmatched})"


def _cells(row) -> list[str]:
    m = row.measures

    def number(value, digits: str = ".3e") -> str:
        return "" if value is None else ("inf" if math.isinf(value) else format(value, digits))

    return [str(row.step + 1), row.phase, row.module, row.api, str(row.call), str(row.output), row.source, row.dtype_a,
            row.dtype_b, str(row.elements), number(m.get("cosine"), ".6f"), number(m.get("max_abs")), number(m.get("max_rel")),
            number(m.get("rel_norm")), number(m.get("beyond_1e3"), ".4f"), number(m.get("beyond_5e3"), ".4f"),
            f"{row.tolerance:.1e}", row.verdict, row.why]


def _write(folder: str, a: str, b: str, result, summary: str) -> None:
    import jinja2

    rows = [_cells(row) for row in result.rows]
    with open(os.path.join(folder, "compare.csv"), "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    environment = jinja2.Environment(loader=jinja2.PackageLoader("torchport.report", "templates"), autoescape=True,
                                     undefined=jinja2.StrictUndefined)
    page = environment.get_template("compare.html.j2").render(
        a=a, b=b, summary=summary, settings=result.settings, columns=COLUMNS, numeric=list(NUMERIC),
        rows=[({"diverges": "diverges", "lower precision, as expected": "precision"}.get(row.verdict, ""), cells)
              for row, cells in zip(result.rows, rows)])
    with open(os.path.join(folder, "compare.html"), "w", encoding="utf-8") as file:
        file.write(page)
