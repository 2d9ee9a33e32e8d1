"""The report's header block: what produced the numbers, stated before them.

A score means little without who answered, who judged on which rubric, which
transcripts were probed and how many clusters the intervals rest on. All of it is
in the runs' params, tags and metrics; where runs disagree (a sweep over judges),
each value is listed with its count of runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from benchmark.report.load import RunData
from benchmark.report.retention import CONTROL
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import PARAM

PATH_CHARS = 80  # a transcript path longer than this is cut at its start


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


class HeaderLine(BaseModel):
    name: str
    value: str


def _role(prefix: str) -> Callable[[RunData], str | None]:
    """An answerer or judge: its config name, its model, and a panel's members."""

    def describe(run: RunData) -> str | None:
        p = run.params
        name = p.get(f"{prefix}.name")
        if name is None:
            return None
        model = p.get(f"{prefix}.endpoint.model")
        members = sorted(
            {k.split(".")[2] for k in p if k.startswith(f"{prefix}.members.") and k.count(".") > 2}
        )
        extra = [f"model {model}"] if model else []
        extra += [f"members {', '.join(members)}"] if members else []
        return f"{name} ({'; '.join(extra)})" if extra else name

    return describe


def _rubric(run: RunData) -> str | None:
    p = run.params
    if "rubric.name" not in p:
        return None
    dims = {k.split(".")[2] for k in p if k.startswith("rubric.dimensions.") and k.count(".") == 3}
    text = p["rubric.name"]
    if "rubric.scale_max" in p:
        text += f", 0-{p['rubric.scale_max']} per criterion"
    if dims:
        text += f", {_count(len(dims), 'dimension')}"
    if run.tags.get("not_measured"):
        text += f" ({run.tags['not_measured']} not measured)"
    return text


def _seeds(runs: Sequence[RunData]) -> str:
    """The generated sessions' seeds over all runs: ``seed 0``, or ``seeds 1, 2``."""
    seeds = sorted(
        {r.params["transcript.seed"] for r in runs if _generated(r)},
        key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s),
    )
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}" if seeds else ""


def _generated(run: RunData) -> bool:
    return run.params.get("transcript.kind") == "synthetic" and "transcript.seed" in run.params


def _data(run: RunData, seeds: str) -> str | None:
    """How many transcripts, and where from: generated sessions (``seeds``, size) or files."""
    p = run.params
    kind = p.get("transcript.kind")
    files = run.metrics.get("transcripts/files")
    if kind == "synthetic":
        count = int(files if files is not None else float(p.get("transcript.sessions", 0)))
        text = f"{_count(count, 'generated session')} per run"
        details = [seeds] if seeds else []
        if "transcript.target_tokens" in p:
            details.append(f"about {int(float(p['transcript.target_tokens'])):,} tokens each")
        return f"{text} ({'; '.join(details)})" if details else text
    if kind is None:
        return None
    path = p.get("transcript.path", "")
    if len(path) > PATH_CHARS:
        path = "..." + path[-PATH_CHARS:]
    text = _count(int(files), "transcript file") if files is not None else "transcript files"
    text += f" from `{path}`" if path else ""
    fmt = p.get("transcript.format")
    return f"{text} (format {fmt})" if fmt else text


def _clusters(run: RunData, clusters: int) -> str | None:
    """Clusters behind the run's intervals: of its scored probes, else its points."""
    count = clusters or int(run.metrics.get(names.POINTS_TOTAL, 0))
    if not count:
        return None
    key = run.params.get(PARAM, "point")
    what = {"point": "(transcript, compaction point)", "transcript": "transcript"}.get(key, "task")
    return f"{_count(count, f'{what} cluster')} per run"  # which: stats.cluster_by


def _summary(values: Sequence[str | None]) -> str | None:
    """One value when the runs agree; else each value with its count of runs."""
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    if len(counts) == 1:
        return next(iter(counts))
    return "; ".join(f"{v} ({_count(n, 'run')})" for v, n in counts.items())


def header_lines(
    runs: Sequence[RunData],
    clusters: dict[str, int],
    *,
    where: str,
    reference: str | None,
) -> list[HeaderLine]:
    """The header block's lines in reading order; a line the runs hold nothing for is left
    out. ``clusters``: run id -> scored clusters; ``where``: the runs' sweep or experiment."""
    policies = list(dict.fromkeys(r.policy or r.name for r in runs))
    lines = [
        (
            "Runs",
            f"{_count(len(runs), 'run')} of {_count(len(policies), 'policy', 'policies')} "
            f"({', '.join(policies)}), {where}",
        ),
        ("Answerer", _summary([_role("answerer")(r) for r in runs])),
        ("Judge", _summary([_role("judge")(r) for r in runs])),
        ("Rubric", _summary([_rubric(r) for r in runs])),
        ("Data", _summary([_data(r, _seeds(runs)) for r in runs])),
        ("Clusters", _summary([_clusters(r, clusters.get(r.run_id, 0)) for r in runs])),
    ]
    if reference is not None:
        what = "the uncompacted control" if reference == CONTROL else "the reference policy"
        lines.append(("Reference", f"`{reference}`, {what}: differences are run minus it"))
    return [HeaderLine(name=k, value=v) for k, v in lines if v]
