"""Paired differences: each run against a reference run, on the probes both were asked.

Comparing two runs' separate CIs ignores that they answered the same questions,
and misses most real differences; pairing by probe removes the variation the
probes themselves bring. A run's reference is a run of the reference policy on
the same probes (same seed, transcripts, compaction and probe settings). Runs of
one config over several seeds are also pooled: more clusters, a tighter interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from math import isnan
from typing import Any

from pydantic import BaseModel, Field

from benchmark.errors import UserError
from benchmark.report.load import RunData
from benchmark.scoring.clusters import PARAM, ClusterBy, coarsest, row_cluster
from benchmark.scoring.stats import paired_difference
from benchmark.tracking.sweep import NAME_SEPARATOR

# Params that fix which probes a run is asked: runs agreeing on them share probe ids.
PROBE_KEYS = ("seed", "transcript.", "compaction.", "probe.")
DIM_PREFIX = "d/"
Table = list[dict[str, Any]]
RowPair = tuple[dict[str, Any], dict[str, Any]]  # (run's row, reference's row) of one probe


@dataclass(frozen=True)
class Diffs:
    """How differences are computed: their clusters, and the limits of an interval of a
    difference of two scores, ``(-scale_max, scale_max)`` (None: scale unknown)."""

    cluster_by: ClusterBy = "point"
    limits: tuple[float, float] | None = None


def diffs_for(runs: Sequence[RunData]) -> Diffs:
    """The runs' coarsest ``stats.cluster_by`` and their largest ``rubric.scale_max``."""
    scales = []
    for run in runs:
        try:
            scales.append(float(run.params["rubric.scale_max"]))
        except (KeyError, ValueError):
            continue
    top = max(scales) if scales else None
    return Diffs(
        cluster_by=coarsest([r.params.get(PARAM) for r in runs]),
        limits=(-top, top) if top is not None else None,
    )


class Delta(BaseModel):
    """``run - reference`` on paired probes (see ``benchmark.scoring.stats.paired_difference``)."""

    mean: float
    low: float | None = Field(description="None: no interval (one cluster)")
    high: float | None
    p_value: float | None = Field(description="None below MIN_CLUSTERS_FOR_TEST clusters")
    n: int = Field(description="paired probes")
    clusters: int = Field(description="clusters (stats.cluster_by; (transcript, point) by default)")
    df: float | None = Field(None, description="degrees of freedom of the t interval and test")
    significant: bool = Field(description="p < 0.05, i.e. the CI excludes 0 (needs a p-value)")


class Paired(BaseModel):
    label: str
    run_ids: list[str] = Field(description="the run, or the runs pooled")
    reference_run_ids: list[str] = Field(default_factory=list)
    reference_label: str | None = None
    is_reference: bool = False
    overall: Delta | None = None
    dimensions: dict[str, Delta | None] = Field(default_factory=dict)
    note: str = ""


def _context(run: RunData) -> dict[str, str]:
    return {k: v for k, v in run.params.items() if k.startswith(PROBE_KEYS)}


def _probe_key(key: str) -> bool:
    return key.startswith(PROBE_KEYS) or f"{key}." in PROBE_KEYS


def config_name(run: RunData) -> str:
    """The run's name without the probe-defining values a sweep's run name carries
    (``truncate · seed=2`` -> ``truncate``): runs of one config over seeds share it."""
    head, *parts = run.name.split(NAME_SEPARATOR)
    kept = [p for p in parts if not _probe_key(p.split("=", 1)[0])]
    return NAME_SEPARATOR.join([head, *kept])


def config_key(run: RunData) -> tuple:
    """Everything but the probe-defining params: runs equal on it differ only in probes."""
    return (
        config_name(run),
        tuple(sorted((k, v) for k, v in run.params.items() if k not in _context(run))),
    )


def reference_picker(runs: Sequence[RunData], reference: str) -> Callable[[RunData], RunData]:
    """For each run, the reference run asked the same probes.

    Candidates are runs whose ``policy`` tag is ``reference`` (or, failing that,
    whose run name is). When there are several (a sweep over seeds), the one
    agreeing with the run on most probe-defining params wins, the earliest on ties.
    """
    candidates = [r for r in runs if r.policy == reference] or [
        r for r in runs if r.name == reference
    ]
    if not candidates:
        policies = sorted({r.policy or r.name for r in runs})
        raise UserError(
            f"no run of reference policy '{reference}' among {len(runs)} runs "
            f"(policies: {', '.join(policies)}; choose one with --reference)"
        )
    return lambda run: closest(run, candidates)


def closest(run: RunData, candidates: Sequence[RunData]) -> RunData:
    """The candidate asked the same probes as ``run``: the one agreeing with it on most
    probe-defining params, the earliest on ties."""
    ordered = sorted(candidates, key=lambda r: (r.start_time, r.run_id))
    context = _context(run)
    return max(
        ordered,
        key=lambda c: (
            sum(context.get(k) == v for k, v in _context(c).items()),
            -ordered.index(c),
        ),
    )


def _scored(table: Table, probe_type: str | None) -> dict[str, dict[str, Any]]:
    return {
        str(row["probe_id"]): row
        for row in table
        if row.get("score") is not None
        and not row.get("failed")
        and (probe_type is None or row.get("type") == probe_type)
    }


def matched(mine: Table, theirs: Table, probe_type: str | None = None) -> list[RowPair]:
    """Rows of the probes scored in both tables, in the reference's order.

    A probe must agree on id and question: an id alone could name another probe
    if the compaction points moved (iterative replay with another policy).
    """
    a, b = _scored(mine, probe_type), _scored(theirs, probe_type)
    return [
        (a[pid], b[pid])
        for pid in b
        if pid in a and a[pid].get("question") == b[pid].get("question")
    ]


def delta(pairs: Sequence[RowPair], column: str, how: Diffs = Diffs()) -> Delta | None:
    """``column`` of the run minus the reference's, over pairs where both have a value,
    clustered and kept inside the limits as ``how`` says."""
    kept = [
        (mine[column], ref[column], row_cluster(mine, how.cluster_by))
        for mine, ref in pairs
        if mine.get(column) is not None and ref.get(column) is not None
    ]
    if not kept:
        return None
    clusters: list[Hashable] = [c for _, _, c in kept]
    d = paired_difference(
        [float(a) for a, _, _ in kept],
        [float(b) for _, b, _ in kept],
        clusters=clusters,
        limits=how.limits,
    )
    defined = not (isnan(d.low) or isnan(d.high))
    return Delta(
        mean=d.mean,
        low=d.low if defined else None,
        high=d.high if defined else None,
        p_value=d.p_value,
        n=d.n,
        clusters=d.clusters,
        df=d.df if defined else None,
        significant=d.significant,
    )


def fill(out: Paired, pairs: list[RowPair], dims: list[str], how: Diffs = Diffs()) -> Paired:
    """``out`` with the overall and per-dimension differences over ``pairs``."""
    out.overall = delta(pairs, "score", how)
    out.dimensions = {dim: delta(pairs, f"{DIM_PREFIX}{dim}", how) for dim in dims}
    return out


def paired_differences(
    runs: Sequence[RunData],
    labels: dict[str, str],
    tables: dict[str, Table],
    dims: list[str],
    reference: str,
    *,
    probe_type: str | None = None,
    how: Diffs | None = None,
) -> tuple[list[Paired], list[Paired]]:
    """Each run vs its reference run, and each config pooled over its runs (when it has
    more than one, e.g. a sweep over seeds). Raises UserError when no reference run exists.
    ``how``: clusters and limits (default: ``diffs_for(runs)``)."""
    how = how or diffs_for(runs)
    pick = reference_picker(runs, reference)
    per_run: list[Paired] = []
    groups: dict[tuple, list[tuple[RunData, RunData, list[RowPair]]]] = {}
    for run in runs:
        ref = pick(run)
        out = Paired(
            label=labels[run.run_id],
            run_ids=[run.run_id],
            reference_run_ids=[ref.run_id],
            reference_label=labels[ref.run_id],
        )
        if ref.run_id == run.run_id:
            out.is_reference = True
            per_run.append(out)
            continue
        pairs = matched(tables.get(run.run_id, []), tables.get(ref.run_id, []), probe_type)
        if not pairs:
            out.note = no_pairs_note(probe_type)
            per_run.append(out)
            continue
        per_run.append(fill(out, pairs, dims, how))
        groups.setdefault(config_key(run), []).append((run, ref, pairs))
    pooled = []
    for members in groups.values():
        if len(members) < 2:
            continue
        name = config_name(members[0][0])
        out = Paired(
            label=f"{name}: {len(members)} runs pooled",
            run_ids=[run.run_id for run, _, _ in members],
            reference_run_ids=[ref.run_id for _, ref, _ in members],
            reference_label=f"{reference} on the same probes",
        )
        pooled.append(fill(out, [p for _, _, pairs in members for p in pairs], dims, how))
    for out, label in zip(pooled, numbered([out.label for out in pooled]), strict=True):
        out.label = label  # two pooled configs under one run name: numbered
    return per_run, pooled


def no_pairs_note(probe_type: str | None) -> str:
    """Why a difference is missing: the two runs share no scored probe."""
    return "no probes scored in both runs" + (f" (type {probe_type})" if probe_type else "")


def numbered(labels: list[str]) -> list[str]:
    """``labels`` with ``#1``, ``#2``... after each one that occurs more than once."""
    counts = Counter(labels)
    nth: Counter[str] = Counter()
    out = []
    for label in labels:
        if counts[label] > 1:
            nth[label] += 1
            label = f"{label} #{nth[label]}"
        out.append(label)
    return out
