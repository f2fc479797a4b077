"""Two dumps lined up call by call (step, phase, module path, API for a torch call, call count,
output index), in the execution order of the first: per call, module or torch call alike, its
measures (over the sample, or over every element where both dumps kept the whole tensor) and
verdict, the first call that parts beyond its tolerance, the first NaN or Inf on either side, the
step where losses and gradient norms part, and every setting that differs."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchport.precision.dumpfile import Dump, entry_name
from torchport.precision.measures import lowest, measure, relative, strictest, tolerance
from torchport.precision.stats import sampled

SAME, WITHIN, PRECISION, DIVERGES = "same", "within tolerance", "lower precision, as expected", "diverges"


@dataclass
class Row:
    step: int
    phase: str
    module: str
    api: str  # "" for a module call
    call: int
    output: int
    source: str
    dtype_a: str
    dtype_b: str
    shape: list
    measures: dict
    tolerance: float
    verdict: str
    why: str = ""
    elements: int = 0  # the elements measured: the sample's, or the whole tensor's

    @property
    def name(self) -> str:
        return entry_name(self.step, self.phase, self.module, self.api, self.call, self.output)


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0
    nonfinite: Row | None = None  # the first call where NaN or Inf appears on one side only
    losses_part: tuple[int, float, float] | None = None  # (step, loss A, loss B)
    norms_part: tuple[int, str, float, float] | None = None  # (step, parameter, norm A, norm B)
    settings: list[tuple[str, object, object]] = field(default_factory=list)
    run_precision: str = "float32"

    @property
    def divergent(self) -> list[Row]:
        return [row for row in self.rows if row.verdict == DIVERGES]

    @property
    def first(self) -> Row | None:
        return next(iter(self.divergent), None)

    @property
    def diverges(self) -> bool:
        return bool(self.divergent) or self.losses_part is not None or self.norms_part is not None


def compare(a: Dump, b: Dump) -> Comparison:
    result = Comparison()
    keyed = {_key(record): record for record in b.records}
    seen = set()
    for record in a.records:
        other = keyed.get(_key(record))
        if other is None:
            result.only_a += 1
            continue
        seen.add(_key(record))
        row = _row(record, other, _values(a, record), _values(b, other))
        result.rows.append(row)
        if result.nonfinite is None and _nonfinite(record) != _nonfinite(other):
            result.nonfinite = row
    result.only_b = len(keyed) - len(seen)
    precisions = [p for row in result.rows for p in (row.dtype_a, row.dtype_b)]
    result.run_precision = lowest(*precisions, *a.settings.get("autocast_dtypes", []), *b.settings.get("autocast_dtypes", []))
    _steps(result, a, b, tolerance(result.run_precision))
    result.settings = _settings(a.settings, b.settings)
    return result


def _key(record: dict) -> tuple:
    return record["step"], record["phase"], record["module"], record.get("api", ""), record["call"], record["output"]


def _values(dump: Dump, record: dict):
    """The record's whole tensor, flat, where the dump kept it; else its sample."""
    index = record.get("tensor")
    return dump.tensors[index].reshape(-1) if index is not None else dump.samples[record["sample"]]


def _nonfinite(record: dict) -> bool:
    return bool(record["nan"] or record["inf"])


def _row(a: dict, b: dict, sample_a, sample_b) -> Row:
    """The row of one call; the samples are the whole tensors where both sides kept theirs (one
    side's whole tensor against the other's sample: the sample taken from it as dump takes it)."""
    sample_a, sample_b = _alike(a, sample_a, b), _alike(b, sample_b, a)
    row = Row(a["step"], a["phase"], a["module"], a.get("api", ""), a["call"], a["output"], a["source"] or b["source"],
              a["dtype"], b["dtype"], a["shape"], {}, 0.0, SAME, elements=len(sample_a))
    common = strictest(a["dtype"], b["dtype"])
    allowed = tolerance(a["dtype"], b["dtype"], a.get("autocast_dtype"), b.get("autocast_dtype"))
    row.tolerance = allowed
    if a["shape"] != b["shape"] or len(sample_a) != len(sample_b):
        row.verdict, row.why = DIVERGES, f"shape {a['shape']} against {b['shape']}"
        return row
    row.measures = measure(sample_a, sample_b)
    if _nonfinite(a) != _nonfinite(b):
        side, record = ("A", a) if _nonfinite(a) else ("B", b)
        row.verdict, row.why = DIVERGES, f"{record['nan']} NaN and {record['inf']} Inf in {side} only"
    elif row.measures["rel_norm"] == 0.0:
        row.verdict = SAME
    elif row.measures["rel_norm"] <= common:
        row.verdict = WITHIN
    elif row.measures["rel_norm"] <= allowed:
        row.verdict = PRECISION
        row.why = f"computed in {lowest(a['dtype'], b['dtype'], a.get('autocast_dtype'), b.get('autocast_dtype'))}"
    else:
        row.verdict = DIVERGES
        row.why = f"relative error {row.measures['rel_norm']:.2e} > {allowed:.1e}"
    return row


def _alike(record: dict, values, other: dict):
    """`values` as the other side's: the whole tensor when the other kept its whole one too, else
    the sample (a whole tensor's own sample, where the other side has only that)."""
    if "tensor" in record and "tensor" not in other:
        return sampled(values)
    return values


def _steps(result: Comparison, a: Dump, b: Dump, allowed: float) -> None:
    steps_b = {step["step"]: step for step in b.steps}
    for step in a.steps:
        other = steps_b.get(step["step"])
        if other is None:
            continue
        if result.losses_part is None:
            for loss_a, loss_b in zip(step["loss"], other["loss"]):
                if relative(loss_a, loss_b) > allowed:
                    result.losses_part = (step["step"], loss_a, loss_b)
                    break
        if result.norms_part is None:
            for name, norm_a in step["grad_norms"].items():
                norm_b = other["grad_norms"].get(name)
                if name in other["grad_norms"] and relative(norm_a, norm_b) > allowed:
                    result.norms_part = (step["step"], name, norm_a, norm_b)
                    break


def _settings(a: dict, b: dict) -> list[tuple[str, object, object]]:
    flat_a, flat_b = _flat(a), _flat(b)
    return [(name, flat_a.get(name), flat_b.get(name)) for name in sorted(set(flat_a) | set(flat_b))
            if flat_a.get(name) != flat_b.get(name)]


def _flat(settings: dict) -> dict:
    flat = {}
    for name, value in settings.items():
        if isinstance(value, dict):
            flat.update({f"{name}.{key}": inner for key, inner in value.items()})
        else:
            flat[name] = value
    return flat
