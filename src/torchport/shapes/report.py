"""The dynamic-shape report: Ascend's CSV columns first, then ours; and the terminal summary.

Ascend's `msft_dynamic_shape_analysis_report.csv` has `Function Name, File Path, Line Number,
Call Stack, Input Shape Range, Output Shape Range` and lists only the dynamic sites; a script that
reads it reads ours. The columns added after them: the call's column on its line, the number of
distinct (input, output) signatures, the steps the site was seen in, Dynamic (yes/no: with
`--all` the static sites are listed too), the dims that varied (`input 1 (targets) dim 0: 3..41`:
for the loader's batch, named as the loop names it, and said what the dim is: the batch size, a
length, a count), and the remedies: per target, torch.compile's, the data's.
"""

from __future__ import annotations

from torchport.report.csv_table import write_table
from torchport.shapes.batchdims import batch_dims, carried
from torchport.shapes.batchnames import loop_names
from torchport.shapes.remedies import advice, batch_label, batch_remedy, call_remedy, fixed_shapes
from torchport.shapes.sites import BATCH, IN, OUT, Site, shape_range, varying_dims

ASCEND_COLUMNS = ["Function Name", "File Path", "Line Number", "Call Stack", "Input Shape Range",
                  "Output Shape Range"]
COLUMNS = ASCEND_COLUMNS + ["Column", "Distinct Shapes", "Iterations", "Dynamic", "Varying Dims", "Remedy"]
SHOWN = 12  # dynamic sites named in the terminal summary


def rows(sites: list[Site], include_static: bool = False) -> list[list]:
    chosen = [site for site in sites if site.iterations and (site.dynamic or include_static)]
    chosen.sort(key=lambda site: (site.file, site.line, site.column, site.function))
    table = []
    for site in chosen:
        varying, remedy = _varying(site) if site.dynamic else ("", "")
        table.append([
            site.function, site.file, site.line, site.stack, shape_range(site, IN), shape_range(site, OUT),
            site.column, len(site.signatures), site.iterations, "yes" if site.dynamic else "no", varying, remedy,
        ])
    return table


def _varying(site: Site) -> tuple[str, str]:
    """The Varying Dims and Remedy columns of a dynamic site."""
    if site.function == BATCH:
        dims, names = batch_dims(site), batch_names(site)
        return "; ".join(batch_label(dim, names[dim.varying.position]) for dim in dims), batch_remedy(dims, names)
    varying = varying_dims(site)
    return "; ".join(dim.label for dim in varying), call_remedy(site, varying)


def batch_names(site: Site) -> list[str]:
    """The script's name for each tensor of the batch (`targets`), else its path (`batch[1]`)."""
    width = max((len(signature[OUT]) for signature in site.signatures), default=0)
    paths = list(site.paths) + [f"<input {position}>" for position in range(len(site.paths), width)]
    return loop_names(site.file, site.line, paths)


def write_csv(path: str, sites: list[Site], include_static: bool = False) -> None:
    write_table(path, COLUMNS, rows(sites, include_static))


def summary(sites: list[Site], steps: int, report_path: str | None) -> str:
    """What the terminal shows: counts, the dynamic sites, and what to do about them."""
    seen = [site for site in sites if site.iterations]
    dynamic = sorted((site for site in seen if site.dynamic), key=lambda s: (s.file, s.line, s.column))
    where = f": report {report_path}" if report_path else ""
    head = (f"torchport shapes: {steps} step{'s' if steps != 1 else ''}, {len(seen)} call sites, "
            f"{len(dynamic)} dynamic{where}")
    if not dynamic:
        tail = (fixed_shapes()
                if steps > 1 else " (one step or none: nothing to compare)")
        return head + tail
    lines = [head]
    for site in dynamic[:SHOWN]:
        shapes = (f"shapes {shape_range(site, OUT)}" if site.function == BATCH
                  else f"in {shape_range(site, IN)}  out {shape_range(site, OUT)}")
        lines.append(f"  {site.file}:{site.line}  {site.function}  {shapes}  "
                     f"({len(site.signatures)} shapes in {site.iterations} steps)")
    if len(dynamic) > SHOWN:
        lines.append(f"  ... and {len(dynamic) - SHOWN} more in the report")
    batch = next((site for site in dynamic if site.function == BATCH), None)
    lines.append("Each new shape is compiled again (NPU, torch.compile, XLA, CUDA graphs). Remedies:")
    dims, names = (batch_dims(batch), batch_names(batch)) if batch is not None else ([], [])
    lines += advice(dims, names, _made_in_step(dynamic, dims))
    return "\n".join(lines)


def _made_in_step(dynamic: list[Site], dims: list) -> list[Site]:
    """The call sites whose sizes are not carried from the batch's; first those that make a size
    from fixed inputs (a resize, nonzero): where it comes from."""
    made = [site for site in dynamic if site.function != BATCH
            and not all(carried(dim, dims) for dim in varying_dims(site))]
    return sorted(made, key=lambda site: any(dim.side == IN for dim in varying_dims(site)))
