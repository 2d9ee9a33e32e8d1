"""The comparison: one row per run (scores, CIs, cost of context) and how runs are named.

Scores and their CIs come from the runs' metrics (computed per run when it was
logged); the paired differences against a reference are ``paired.py``'s, those
between every pair of configs ``pairwise.py``'s.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from benchmark.report.header import HeaderLine, header_lines
from benchmark.report.interval import Interval
from benchmark.report.layout import (
    clusters,
    common_suffix,
    order,
    short_name,
    strip_suffix,
)
from benchmark.report.load import RunData, Selection
from benchmark.report.paired import DIM_PREFIX, Delta, Paired, Table, paired_differences
from benchmark.report.pairwise import pairwise_differences
from benchmark.report.per_type import AGREEMENT_COLUMN, type_scores
from benchmark.report.retention import CONTROL as RETENTION_CONTROL
from benchmark.report.retention import retention_against_control
from benchmark.report.task_points import TaskPoint
from benchmark.report.task_success import TaskSuccess, task_success
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import PARAM
from benchmark.tracking.run_colours import RUN_COLOR_TAG, colour_at

_HEX = re.compile(r"#[0-9a-fA-F]{6}")

__all__ = ["AGREEMENT_COLUMN", "Comparison", "Delta", "Interval", "Paired", "Row", "compare"]


class Row(BaseModel):
    run_id: str
    label: str
    run_name: str
    policy: str | None
    overall: Interval
    dimensions: dict[str, Interval]
    tokens_after: float | None
    kept_fraction: float | None
    compression_ratio: float | None
    cost_usd: float
    failures: int
    probes: int
    retention: Interval = Field(
        default_factory=Interval, description="score over the control run's on the same probes"
    )
    by_type: dict[str, Interval] = Field(
        default_factory=dict, description="score per probe type, with its 95% CI"
    )
    clusters: int = Field(0, description="clusters behind its CIs (stats.cluster_by)")
    colour: str = Field(
        "", description="its MLflow run colour (tag mlflow.runColor), else the palette's"
    )


class Comparison(BaseModel):
    kind: str
    source: str
    name: str = Field("", description="short name for titles: the end of the sweep folder")
    suffix: str = Field("", description="stripped from every label (e.g. @synthetic)")
    scale_max: float | None = Field(None, description="top of the rubric scale")
    experiment: str
    experiment_id: str = ""
    ui_url: str | None = Field(None, description="MLflow UI the run ids link to (a server)")
    reference: str | None
    probe_type: str | None
    dimensions: list[str]
    probe_types: list[str] = Field(default_factory=list)
    rows: list[Row]
    differences: list[Paired] = Field(description="each run vs its reference run")
    pooled: list[Paired] = Field(
        default_factory=list,
        description="each config vs the reference, pooled over its runs on other probes (seeds)",
    )
    pairs: list[Paired] = Field(
        default_factory=list,
        description="every later config minus every earlier one, pooled over its runs",
    )
    header: list[HeaderLine] = Field(
        default_factory=list, description="answerer, judge, rubric, data, clusters, reference"
    )
    task: TaskSuccess | None = Field(
        None, description="probe score vs task success (issue 29), when runs resumed tasks"
    )

    def to_json(self) -> str:
        """``comparison.json``: without ``task`` when no run has it, so a report of runs
        without the task arm is byte for byte what it was before the arm existed."""
        exclude = {"task"} if self.task is None else None
        return self.model_dump_json(indent=1, exclude=exclude) + "\n"


def compare(
    selection: Selection,
    tables: dict[str, Table],
    *,
    reference: str | None = "none",
    probe_type: str | None = None,
    task_points: dict[str, list[TaskPoint]] | None = None,
) -> Comparison:
    """Build the table and, unless ``reference`` is None, the paired differences; with runs
    that resumed tasks (``task_points``: run id -> its points table), the task section."""
    runs = sorted(selection.runs, key=_order_key(selection.runs))
    labels = make_labels(runs)
    suffix = common_suffix(list(labels.values()))
    labels = {rid: strip_suffix(label, suffix) for rid, label in labels.items()}
    dims = dimension_names(runs, tables)
    types, per_type = type_scores(runs, tables, _scale_max(runs))
    ranked = order(
        {r.run_id: r.metrics.get(names.OVERALL) for r in runs},
        {r.run_id: r.policy for r in runs},
        reference if reference is not None else RETENTION_CONTROL,
    )
    runs = sorted(runs, key=lambda r: ranked.index(r.run_id))
    rows = [_row(run, labels[run.run_id], dims) for run in runs]
    for index, (run, row) in enumerate(zip(runs, rows, strict=True)):
        row.colour = run_colour(run, index)
        row.by_type = {
            t: Interval(value=v, low=low, high=high)
            for t, (v, low, high) in per_type[row.run_id].items()
        }
        row.clusters = clusters(tables.get(row.run_id, []), run.params.get(PARAM, "point"))
    kept = retention_against_control(runs, tables, probe_type)
    for row in rows:
        if row.run_id in kept:
            value, low, high = kept[row.run_id]
            row.retention = Interval(value=value, low=low, high=high)
    differences: list[Paired] = []
    pooled: list[Paired] = []
    if reference is not None:
        differences, pooled = paired_differences(
            runs,
            labels,
            tables,
            dims,
            reference,
            probe_type=probe_type,
        )
        for out in pooled:
            out.label = strip_suffix(out.label, suffix)
    pairs = pairwise_differences(runs, labels, tables, dims, probe_type=probe_type)
    for out in pairs:  # a pooled config is named by its run name, suffix and all
        out.label = strip_suffix(out.label, suffix)
        out.reference_label = strip_suffix(out.reference_label or "", suffix)
    where = f"sweep `{selection.source}`" if selection.kind == "sweep" else "all runs"
    where += f" of experiment `{selection.experiment}`"
    where += f"; each named `<name>{suffix}`" if suffix else ""
    header = header_lines(
        runs, {row.run_id: row.clusters for row in rows}, where=where, reference=reference
    )
    return Comparison(
        header=header,
        kind=selection.kind,
        source=selection.source,
        name=short_name(selection.kind, selection.source),
        suffix=suffix,
        scale_max=_scale_max(runs),
        experiment=selection.experiment,
        experiment_id=selection.experiment_id,
        reference=reference,
        probe_type=probe_type,
        dimensions=dims,
        probe_types=types,
        rows=rows,
        differences=differences,
        pooled=pooled,
        pairs=pairs,
        task=task_success(
            runs,
            {row.run_id: row.label for row in rows},
            {row.run_id: row.colour for row in rows},
            task_points or {},
        ),
    )


def run_colour(run: RunData, index: int) -> str:
    """The colour MLflow shows the run in (a ``#rrggbb`` tag), else the ``index``-th of
    MLflow's palette (``run_colours.colour_at``)."""
    tag = run.tags.get(RUN_COLOR_TAG, "")
    return tag if _HEX.fullmatch(tag) else colour_at(index)


def _scale_max(runs: Sequence[RunData]) -> float | None:
    """The rubric's top score when the runs agree on it (params ``rubric.scale_max``)."""
    values = {r.params.get("rubric.scale_max") for r in runs}
    if len(values) != 1 or None in values:
        return None
    try:
        return float(values.pop())  # type: ignore[arg-type]
    except ValueError:
        return None


def dimension_names(runs: Sequence[RunData], tables: dict[str, Table]) -> list[str]:
    """The rubric's dimensions in rubric order: from the tables' ``d/`` columns, else params."""
    dims: dict[str, None] = {}
    for run in runs:
        for row in tables.get(run.run_id, [])[:1]:
            dims.update(dict.fromkeys(k[len(DIM_PREFIX) :] for k in row if k.startswith("d/")))
    if not dims:
        for run in runs:
            for key in run.params:
                parts = key.split(".")
                if len(parts) == 4 and parts[:2] == ["rubric", "dimensions"]:
                    dims[parts[2]] = None
    return list(dims)


def _row(run: RunData, label: str, dims: list[str]) -> Row:
    m = run.metrics
    failures = m.get(names.PROBES_FAILED)
    if failures is None:
        failures = m.get(names.PROBES_FAILED_ANSWERS, 0) + m.get(names.PROBES_FAILED_JUDGMENTS, 0)
    return Row(
        run_id=run.run_id,
        label=label,
        run_name=run.name,
        policy=run.policy,
        overall=_interval(m, names.OVERALL),
        dimensions={d: _interval(m, names.dimension(d)) for d in dims},
        tokens_after=m.get(names.TOKENS_AFTER),
        kept_fraction=m.get(names.KEPT_FRACTION),
        compression_ratio=m.get(names.COMPRESSION_RATIO),
        cost_usd=m.get(names.COST_USD, 0.0),
        failures=int(failures),
        probes=int(m.get(names.PROBES_TOTAL, 0)),
    )


def _interval(metrics: dict[str, float], name: str) -> Interval:
    low, high = names.ci_names(name)
    return Interval(value=metrics.get(name), low=metrics.get(low), high=metrics.get(high))


# ---- labels -------------------------------------------------------------------------------


def override_keys(runs: Sequence[RunData]) -> list[str]:
    """Keys named in the runs' sweep overrides (``a.b=1,2`` -> ``a.b``), Hydra's own left out."""
    keys: dict[str, None] = {}
    for run in runs:
        try:
            tokens = shlex.split(run.overrides)
        except ValueError:
            tokens = run.overrides.split()
        for token in tokens:
            key = token.split("=", 1)[0].lstrip("+~").strip()
            if "=" in token and key and not key.startswith("hydra"):
                keys[key] = None
    return list(keys)


def param_value(run: RunData, key: str) -> str | None:
    """A config value by its override key; a group choice (``policy``) reads ``policy.name``."""
    if key in run.params:
        return run.params[key]
    return run.params.get(f"{key.replace('/', '.')}.name")


def make_labels(runs: Sequence[RunData]) -> dict[str, str]:
    """Run name plus the overrides that tell apart runs of the same name.

    Keys come from the sweep overrides; runs without any (single jobs) are told
    apart by whichever params differ. A key some run lacks tells nothing; labels
    that still collide get the start of the run id.
    """
    keys = override_keys(runs)
    by_name: dict[str, list[RunData]] = {}
    for run in runs:
        by_name.setdefault(run.name, []).append(run)
    labels: dict[str, str] = {}
    for name, group in by_name.items():
        candidates = keys or sorted({k for r in group for k in r.params})
        differing = [
            k
            for k in candidates
            if len(values := {param_value(r, k) for r in group}) > 1 and None not in values
        ]
        for run in group:
            parts = [f"{k}={param_value(run, k)}" for k in differing]
            labels[run.run_id] = f"{name} ({', '.join(parts)})" if parts else name
    seen: dict[str, int] = {}
    for label in labels.values():
        seen[label] = seen.get(label, 0) + 1
    return {
        rid: f"{label} #{rid[:8]}" if seen[label] > 1 else label for rid, label in labels.items()
    }


def _order_key(runs: Sequence[RunData]) -> Callable[[RunData], tuple]:
    """Runs of one name together, then by their override values (numbers numerically)."""
    keys = override_keys(runs)

    def key(run: RunData) -> tuple:
        values = tuple(_natural(param_value(run, k) or "") for k in keys)
        return (run.name, values, run.start_time, run.run_id)

    return key


def _natural(text: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))
