"""The table printed at the end of a job."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from benchmark.judge.measured import NOTE
from benchmark.probe.models import PROBE_TYPES
from benchmark.results import JobResult


def render(result: JobResult, console: Console | None = None) -> str:
    """Print the scorecard and return it as plain text (also logged as an artifact)."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # logs and pipes: no wrapped or elided columns
    scale = result.rubric.scale_max
    overall = result.scores()
    metrics = result.metrics()
    clusters = len(
        {(r.probe.transcript_id, r.probe.point) for r in result.probe_results if not r.failed}
    )

    table = Table(
        title=f"Scorecard: policy={result.policy}  transcripts={', '.join(result.transcripts)}",
        caption=(
            f"scores 0-{scale} on rubric '{result.rubric.name}'; "
            f"tokens {int(metrics['tokens/before']):,} -> {int(metrics['tokens/after']):,} "
            f"over {len(result.points)} compaction point(s), "
            f"compression {metrics['compression_ratio']:.1f}x; "
            f"failures: {int(metrics['failures/answers'])} answers, "
            f"{int(metrics['failures/judgments'])} judgments; "
            f"[95% CI]: bootstrap over {clusters} (transcript, point) cluster(s)"
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
        key = "overall" if probe_type is None else f"type/{probe_type}"
        table.add_row(
            label,
            str(scores.n),
            _fmt(scores.overall, metrics.get(f"{key}/ci_low"), metrics.get(f"{key}/ci_high")),
            *("n/m" if d in result.not_measured else _fmt(scores.dimensions.get(d)) for d in dims),
        )

    add("all", None)
    for ptype in PROBE_TYPES:
        add(ptype, ptype)

    with console.capture() as capture:
        console.print(table)
    text = capture.get()
    console.print(table)
    return text


def _fmt(value: float | None, low: float | None = None, high: float | None = None) -> str:
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"
