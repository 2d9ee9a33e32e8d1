"""The audit's printed summary: a scorecard of the judge against known gold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from benchmark.audit.metrics import Rate

if TYPE_CHECKING:
    from benchmark.audit.run import AuditResult


def render(result: AuditResult, console: Console | None = None) -> str:
    """Print the summary and return it as plain text (also logged as an artifact)."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
    m = result.metrics
    audit = result.audit
    items = len(result.items)
    skipped = ", ".join(f"{v} {n}" for v, n in sorted(result.skipped.items())) or "none"
    table = Table(
        title=f"Judge audit: judge={result.judge}  rubric={result.rubric.name}",
        caption=(
            f"{result.probes} probes, {items} answers x {audit.samples} sample(s), "
            f"{m.judgments} criterion judgments; agree = |score - expected| <= "
            f"{result.tolerance:g} on 0-{result.rubric.scale_max}; variants not buildable: "
            f"{skipped}"
        ),
    )
    table.add_column("group")
    table.add_column("n", justify="right")
    table.add_column("agreement", justify="right", style="bold")
    table.add_column("exact", justify="right")

    def add(label: str, rate: Rate) -> None:
        table.add_row(label, str(rate.n), _pct(rate.agreement), _pct(rate.exact_agreement))

    add("all", m.overall)
    for prefix, groups in (
        ("variant", m.by_variant),
        ("type", m.by_type),
        ("criterion", m.by_criterion),
    ):
        table.add_section()
        for name, rate in groups.items():
            add(f"{prefix} {name}", rate)

    lines = [
        f"consistency over {audit.samples} samples: "
        + (
            f"{_pct(m.consistency)} identical, mean std {m.consistency_std:.3f}"
            if m.consistency is not None and m.consistency_std is not None
            else "- (needs audit.samples >= 2)"
        ),
        "verbosity (padded vs full): "
        + (
            f"inflated on {_pct(m.verbosity_inflation)} of {m.verbosity_probes} probes, "
            f"overall delta {m.verbosity_delta:+.3f}"
            if m.verbosity_inflation is not None and m.verbosity_delta is not None
            else "- (needs the full and padded variants)"
        ),
        f"failed judgments: {m.failures}",
    ]
    with console.capture() as capture:
        _show(console, table, lines)
    text = capture.get()
    _show(console, table, lines)
    return text


def _show(console: Console, table: Table, lines: list[str]) -> None:
    console.print(table)
    for line in lines:
        console.print(line, highlight=False, markup=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
