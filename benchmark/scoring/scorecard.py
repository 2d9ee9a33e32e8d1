"""The table printed at the end of a job."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchmark.judge.measured import NOTE
from benchmark.probe.models import PROBE_TYPES
from benchmark.run.results import CI_CONFIDENCE, JobResult
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import LABELS
from benchmark.scoring.stats import Estimate, describe, no_test_reason

SHOWN_NAMES = 3  # transcript names in the title; the manifest artifact lists them all


def transcripts(ids: list[str]) -> str:
    """The job's transcripts in a few words: all of a short list, else the count and the
    first names (``transcripts/manifest.json`` in the run holds every one)."""
    if len(ids) <= SHOWN_NAMES:
        return ", ".join(ids)
    more = len(ids) - SHOWN_NAMES
    return f"{len(ids)} ({', '.join(ids[:SHOWN_NAMES])} and {more} more: see the manifest)"


def render(result: JobResult, console: Console | None = None) -> str:
    """Print the scorecard and return it as plain text (also logged as an artifact)."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # logs and pipes: no wrapped or elided columns
    scale = result.rubric.scale_max
    overall = result.scores()
    metrics = result.metrics()
    estimates = result.estimates()
    clusters = result.cluster_count()
    overall_est = estimates.get(names.OVERALL)
    method = describe(clusters, overall_est.df if overall_est else None, CI_CONFIDENCE)
    untested = no_test_reason(clusters)

    table = Table(
        title=f"Scorecard: policy={result.policy}  transcripts={transcripts(result.transcripts)}",
        caption=(
            f"scores 0-{scale} on rubric '{result.rubric.name}'; "
            + tokens(metrics, len(result.points))
            + f"failures: {int(metrics[names.PROBES_FAILED_ANSWERS])} answers, "
            f"{int(metrics[names.PROBES_FAILED_JUDGMENTS])} judgments; "
            f"[{method}; clusters are {LABELS[result.cluster_by]} (stats.cluster_by="
            f"{result.cluster_by})]"
            + (f"; {untested}" if untested else "")
            + "".join(f"\nwarning: {w}" for w in (result.inputs.warnings if result.inputs else []))
            + over_window(result)
            + stage_failures(result)
            + "".join(f"\nn/m = {d}: {NOTE}" for d in result.not_measured)
        ),
    )
    dims = list(result.rubric.dimensions)
    table.add_column("probes", justify="left")
    table.add_column("n", justify="right")
    table.add_column("overall", justify="right", style="bold")
    for dim in dims:
        table.add_column(dim, justify="right")

    def add(label: str, probe_type: str | None) -> None:
        scores = overall if probe_type is None else result.scores(probe_type)
        if scores.n == 0:
            return
        key = names.OVERALL if probe_type is None else names.type_overall(probe_type)
        table.add_row(
            label,
            str(scores.n),
            _fmt(scores.overall, estimates.get(key)),
            *("n/m" if d in result.not_measured else _fmt(scores.dimensions.get(d)) for d in dims),
        )

    add("all", None)
    for ptype in PROBE_TYPES:
        add(ptype, ptype)

    notes = [escape(line) for line in [*_answerer_free(metrics), *failure_notes(result)]]
    with console.capture() as capture:
        console.print(table)
        for note in notes:
            console.print(note)
    text = capture.get()
    console.print(table)
    for note in notes:
        console.print(note)
    return text


def over_window(result: JobResult) -> str:
    """The caption's note of points where the policy's output did not fit the window."""
    over = sum(p.over_window for p in result.points)
    if not over:
        return ""
    window = f"the {result.context_window:,}-token" if result.context_window else "the"
    return (
        f"; [bold red]policy failure: {over} of {len(result.points)} points: policy output "
        f"over {window} window[/]"
    )


def tokens(metrics: dict[str, float], points: int) -> str:
    """The caption's token figures (none when no point could be compacted)."""
    if names.TOKENS_AFTER not in metrics:
        return f"no compacted context at {points} compaction point(s); "
    return (
        f"tokens {int(metrics[names.TOKENS_BEFORE]):,} -> {int(metrics[names.TOKENS_AFTER]):,} "
        f"over {points} compaction point(s), "
        f"compression {metrics[names.COMPRESSION_RATIO]:.1f}x; "
    )


def stage_failures(result: JobResult) -> str:
    """The caption's note of points whose compaction or probe writer failed."""
    total = len(result.points)
    compaction = sum(p.compaction_error is not None for p in result.points)
    writer = sum(p.probe_writer_error is not None for p in result.points)
    note = ""
    if compaction:
        note += (
            f"; [bold red]compaction failed at {compaction} of {total} points: their probes "
            "are counted as failed, their tokens left out[/]"
        )
    if writer:
        note += (
            f"; [bold red]probe writer failed at {writer} of {total} points: no probes from them[/]"
        )
    return note


def failure_notes(result: JobResult) -> list[str]:
    """Under the table: the first error of each failing stage, so the cause is on screen."""
    lines = []
    for errors in (
        [p.compaction_error for p in result.points if p.compaction_error],
        [p.probe_writer_error for p in result.points if p.probe_writer_error],
    ):
        if errors:
            lines.append(f"first of {len(errors)} failed point(s): {errors[0]}")
    return lines


def _answerer_free(metrics: dict[str, float]) -> list[str]:
    """Lines under the table for the measures beside the score: fact survival, the control
    arm and retention, next-action agreement with the control, repeated probes left out."""
    lines = []
    if names.FACTS_SURVIVAL in metrics:
        lines.append(
            f"{names.FACTS_SURVIVAL} {_metric(metrics, names.FACTS_SURVIVAL)}: share of each "
            "probe's gold "
            "facts still stated in the compacted context"
        )
    if names.RETENTION in metrics:
        control = metrics.get(names.CONTROL_OVERALL, float("nan"))
        lines.append(
            f"{names.RETENTION} {_metric(metrics, names.RETENTION)} = score / control score on "
            f"{int(metrics[names.RETENTION_PROBES])} paired probes (control overall {control:.2f})"
        )
    agreement = names.type_control_agreement("next_action")
    if agreement in metrics:
        score = metrics.get(names.type_overall("next_action"), float("nan"))
        lines.append(
            f"{agreement} {_metric(metrics, agreement)} beside next_action {score:.2f}: the "
            "answer scored against the uncompacted context's answer instead of the log's step"
        )
    if metrics.get(names.PROBES_REPEATED):
        lines.append(
            f"{int(metrics[names.PROBES_REPEATED])} probe(s) repeated at a later point of their "
            "session were asked once"
        )
    return lines


def _metric(metrics: dict[str, float], name: str) -> str:
    """A metric with its logged interval, or ``[n/a]`` where the interval is undefined."""
    low, high = (metrics.get(key) for key in names.ci_names(name))
    bounds = "[n/a]" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"
    return f"{metrics[name]:.2f} {bounds}"


def _fmt(value: float | None, estimate: Estimate | None = None) -> str:
    if value is None:
        return "-"
    if estimate is None:
        return f"{value:.2f}"
    if not estimate.defined:
        return escape(f"{value:.2f} [n/a]")  # not a Rich markup tag
    return f"{value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"
