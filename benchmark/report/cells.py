"""The report's tables as cells, shared by Markdown, HTML and the terminal so they never
disagree: the comparison (constant columns folded out), per probe type, paired
differences (against the reference, and between every two configs), and where each row
lives in MLflow."""

from __future__ import annotations

from typing import NamedTuple

from benchmark.report.compare import Comparison, Delta, Interval, Paired, Row
from benchmark.report.retention import CONTROL

PAIRS_HEADING = "Paired differences between every two configs"


class Cell(NamedTuple):
    """One table cell: the figure, its interval/test detail, whether it is significant, and
    its direction against the reference (``up``: better, ``down``: worse, ``""``: neither)."""

    main: str
    detail: str = ""
    significant: bool = False
    tone: str = ""
    href: str = ""

    def text(self) -> str:
        """The cell on one line (Markdown, terminal)."""
        mark = " *" if self.significant else ""
        detail = self.detail.replace("\n", " ")
        return f"{self.main} {detail}{mark}" if detail else self.main + mark


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval_cell(cell: Interval) -> Cell:
    if cell.value is None:
        return Cell("-")
    if cell.low is None or cell.high is None:
        return Cell(fmt(cell.value), "[n/a]")
    return Cell(fmt(cell.value), f"[{fmt(cell.low)}, {fmt(cell.high)}]")


def delta_cell(delta: Delta | None) -> Cell:
    """Difference, interval and p-value; no p-value (and no mark) on too few clusters."""
    if delta is None:
        return Cell("-")
    if delta.low is None or delta.high is None:
        interval = "[n/a]"
    else:
        interval = f"[{delta.low:+.2f}, {delta.high:+.2f}]"
    tone = "up" if delta.mean > 0 else "down" if delta.mean < 0 else ""
    if tone and not (
        delta.low is not None and delta.high is not None and delta.low * delta.high > 0
    ):
        tone += " faint"  # the interval holds 0: the direction is a lean, not a finding
    if delta.p_value is None:
        return Cell(f"{delta.mean:+.2f}", interval, tone=tone)
    p = "p<0.001" if delta.p_value < 0.001 else f"p={delta.p_value:.3f}"
    return Cell(f"{delta.mean:+.2f}", f"{interval}\n{p}", delta.significant, tone)


def _tokens(row: Row) -> Cell:
    after = "-" if row.tokens_after is None else f"{row.tokens_after:,.0f}"
    if row.kept_fraction is None:
        return Cell(after)
    return Cell(after, f"({100 * row.kept_fraction:.1f}%)")


def table_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """Header and body of the comparison table (a retention column when a run is the
    control), without the columns that are the same on every row (``constant_columns``)."""
    header, body = _all_cells(comparison)
    folded = {i for i, _ in _constant(header, body)}
    keep = [i for i in range(len(header)) if i not in folded]
    return [header[i] for i in keep], [[cells[i] for i in keep] for cells in body]


def constant_columns(comparison: Comparison) -> list[tuple[str, str]]:
    """(column, value) of the comparison columns equal on every row (two rows or more)."""
    header, body = _all_cells(comparison)
    return [(header[i], value) for i, value in _constant(header, body)]


def _constant(header: list[str], body: list[list[Cell]]) -> list[tuple[int, str]]:
    if len(body) < 2:
        return []
    out = []
    for i in range(2, len(header)):  # the run and its overall score always stay
        values = {cells[i].text() for cells in body}
        if len(values) == 1:
            out.append((i, values.pop()))
    return out


def _all_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    retention = any(row.retention.value is not None for row in comparison.rows)
    header = [
        "run",
        "overall [95% CI]",
        *([f"retention vs {CONTROL}"] if retention else []),
        *comparison.dimensions,
        "tokens kept",
        "compression",
        "cost (USD)",
        "failures",
        "probes",
    ]
    body = [
        [
            Cell(row.label),
            interval_cell(row.overall),
            *([interval_cell(row.retention)] if retention else []),
            *(interval_cell(row.dimensions.get(d, Interval())) for d in comparison.dimensions),
            _tokens(row),
            Cell("-" if row.compression_ratio is None else f"{row.compression_ratio:.1f}x"),
            Cell(f"{row.cost_usd:.4f}"),
            Cell(str(row.failures)),
            Cell(str(row.probes)),
        ]
        for row in comparison.rows
    ]
    return header, body


def difference_cells(
    comparison: Comparison, pooled: bool = False
) -> tuple[list[str], list[list[Cell]]]:
    """Header and body of a paired-differences table (run - reference): per run, or
    (``pooled``) per config over its runs."""
    diffs = comparison.pooled if pooled else comparison.differences
    return _differences(diffs, comparison.dimensions, "vs reference")


def pair_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """Every pair of configs: the row's minus the one beside it, on paired probes."""
    return _differences(comparison.pairs, comparison.dimensions, "minus")


def _differences(
    diffs: list[Paired], dims: list[str], against: str
) -> tuple[list[str], list[list[Cell]]]:
    header = ["run", against, "paired probes", "overall", *dims]
    body = []
    for diff in diffs:
        if diff.is_reference:
            rest = [Cell("-") for _ in range(2 + len(dims))]
            body.append([Cell(diff.label), Cell("(reference)"), *rest])
            continue
        body.append(
            [
                Cell(diff.label),
                Cell(diff.reference_label or "-"),
                _pairs(diff),
                delta_cell(diff.overall) if diff.overall else Cell(diff.note or "-"),
                *(delta_cell(diff.dimensions.get(d)) for d in dims),
            ]
        )
    return header, body


def _pairs(diff: Paired) -> Cell:
    if diff.overall is None:
        return Cell("0")
    return Cell(str(diff.overall.n), f"({diff.overall.clusters} clusters)")


def type_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """Each run's score per probe type with its 95% CI: which kind of fact a policy loses."""
    header = ["run", *comparison.probe_types]
    body = [
        [
            Cell(row.label),
            *(interval_cell(row.by_type.get(t, Interval())) for t in comparison.probe_types),
        ]
        for row in comparison.rows
    ]
    return header, body


def run_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """Where each row comes from in MLflow: its id, a link when the report knows the UI."""
    ui, experiment = comparison.ui_url, comparison.experiment_id
    header = ["run", "MLflow run name", "MLflow run id"]
    return header, [
        [
            Cell(row.label),
            Cell(row.run_name),
            Cell(
                row.run_id, href=f"{ui}/#/experiments/{experiment}/runs/{row.run_id}" if ui else ""
            ),
        ]
        for row in comparison.rows
    ]


def tables(comparison: Comparison) -> list[tuple[str, tuple[list[str], list[list[Cell]]]]]:
    """The report's tables in order, with their headings (Markdown and HTML share them)."""
    out = [("Comparison", table_cells(comparison))]
    if comparison.probe_types:
        out.append(("Mean score per probe type", type_cells(comparison)))
    if comparison.differences:
        out.append((f"Paired differences vs {comparison.reference}", difference_cells(comparison)))
    if comparison.pooled:
        out.append(
            (
                f"Paired differences vs {comparison.reference}, pooled over seeds",
                difference_cells(comparison, pooled=True),
            )
        )
    if comparison.pairs:
        out.append((PAIRS_HEADING, pair_cells(comparison)))
    out.append(("MLflow runs", run_cells(comparison)))
    return out
