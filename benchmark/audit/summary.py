"""The audit's printed summary: a scorecard of the judge against known gold."""

from __future__ import annotations

from typing import get_args

from rich.console import Console
from rich.table import Table

from benchmark.audit.expected import Class
from benchmark.audit.metrics import Rate
from benchmark.audit.record import AuditResult

CLASS_ORDER: tuple[str, ...] = get_args(Class)


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
            f"{m.judgments} counted criterion judgments; agree = score in the band a correct "
            f"judge gives (0-{result.rubric.scale_max}); variants left out: {skipped}"
        ),
    )
    table.add_column("group")
    table.add_column("n", justify="right")
    table.add_column("agreement", justify="right", style="bold")

    def add(label: str, rate: Rate) -> None:
        table.add_row(label, str(rate.n), _pct(rate.agreement))

    add("all", m.overall)
    for prefix in ("variant", "class", "type", "criterion"):
        table.add_section()
        for name, rate in m.groups.get(prefix, {}).items():
            add(f"{prefix} {name}", rate)
    matrix = variant_classes(m.groups.get("variant_class", {}))

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
        _show(console, [table, matrix], lines)
    text = capture.get()
    _show(console, [table, matrix], lines)
    return text


def variant_classes(cells: dict[str, Rate]) -> Table:
    """Agreement per variant (rows) and criterion class (columns): where a judge goes wrong."""
    rows = list(dict.fromkeys(k.split("/")[0] for k in cells))
    cols = [c for c in CLASS_ORDER if any(k.endswith(f"/{c}") for k in cells)]
    table = Table(title="Agreement by variant and criterion class (n in brackets; - not checked)")
    table.add_column("variant")
    for col in cols:
        table.add_column(col, justify="right")
    for row in rows:
        shown = []
        for col in cols:
            rate = cells.get(f"{row}/{col}")
            shown.append("-" if rate is None else f"{_pct(rate.agreement)} ({rate.n})")
        table.add_row(row, *shown)
    return table


def _show(console: Console, tables: list[Table], lines: list[str]) -> None:
    for table in tables:
        console.print(table)
    for line in lines:
        console.print(line, highlight=False, markup=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
