"""The comparison as Markdown and as one self-contained HTML page.

Both are built from the same cells so they never disagree. The HTML page
inlines its figures as base64 ``data:`` URIs and its style in a ``<style>``
element: it opens from a mail attachment or an MLflow artifact view with no
other file, no network and no script.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import NamedTuple

from benchmark.report.compare import Comparison, Delta, Interval, Paired, Row
from benchmark.report.retention import CONTROL
from benchmark.stats import METHOD, MIN_CLUSTERS_FOR_TEST


class Cell(NamedTuple):
    """One table cell: the figure, its interval/test detail, and whether it is significant."""

    main: str
    detail: str = ""
    significant: bool = False

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
    if delta.p_value is None:
        return Cell(f"{delta.mean:+.2f}", interval)
    p = "p<0.001" if delta.p_value < 0.001 else f"p={delta.p_value:.3f}"
    return Cell(f"{delta.mean:+.2f}", f"{interval}\n{p}", delta.significant)


def _tokens(row: Row) -> Cell:
    after = "-" if row.tokens_after is None else f"{row.tokens_after:,.0f}"
    if row.kept_fraction is None:
        return Cell(after)
    return Cell(after, f"({100 * row.kept_fraction:.1f}%)")


def table_cells(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """Header and body of the comparison table (a retention column when a run is the
    control)."""
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
    header = ["run", "vs reference", "paired probes", "overall", *comparison.dimensions]
    body = []
    for diff in comparison.pooled if pooled else comparison.differences:
        if diff.is_reference:
            rest = [Cell("-") for _ in range(2 + len(comparison.dimensions))]
            body.append([Cell(diff.label), Cell("(reference)"), *rest])
            continue
        body.append(
            [
                Cell(diff.label),
                Cell(diff.reference_label or "-"),
                _pairs(diff),
                delta_cell(diff.overall) if diff.overall else Cell(diff.note or "-"),
                *(delta_cell(diff.dimensions.get(d)) for d in comparison.dimensions),
            ]
        )
    return header, body


def _pairs(diff: Paired) -> Cell:
    if diff.overall is None:
        return Cell("0")
    return Cell(str(diff.overall.n), f"({diff.overall.clusters} clusters)")


def tables(comparison: Comparison) -> list[tuple[str, tuple[list[str], list[list[Cell]]]]]:
    """The report's tables in order, with their headings (Markdown and HTML share them)."""
    out = [("Comparison", table_cells(comparison))]
    if comparison.differences:
        out.append((f"Paired differences vs {comparison.reference}", difference_cells(comparison)))
    if comparison.pooled:
        out.append(
            (
                f"Paired differences vs {comparison.reference}, pooled over seeds",
                difference_cells(comparison, pooled=True),
            )
        )
    return out


def _title(comparison: Comparison) -> str:
    return f"Compaction benchmark: {comparison.kind} {comparison.source}"


def _test_notes(comparison: Comparison) -> list[str]:
    """How differences are tested, and one line on those with too few clusters to test."""
    deltas = [
        d
        for paired in (*comparison.differences, *comparison.pooled)
        for d in (paired.overall, *paired.dimensions.values())
        if d is not None
    ]
    untested = sorted({d.clusters for d in deltas if d.p_value is None})
    notes = []
    if any(d.p_value is not None for d in deltas):
        notes.append(
            "Two-sided t-test with the interval's own standard error and df, so `*` "
            "(p below 0.05) marks exactly the intervals that exclude 0."
        )
    if untested:
        counts = ", ".join(str(c) for c in untested)
        notes.append(
            f"No p-values: {counts} cluster(s) (< {MIN_CLUSTERS_FOR_TEST}) where none is "
            "shown; too few to test."
        )
    return notes


def _notes(comparison: Comparison) -> list[str]:
    probes = f"{comparison.probe_type} probes" if comparison.probe_type else "all probe types"
    notes = [
        f"Experiment `{comparison.experiment}`, {len(comparison.rows)} runs. Scores on the "
        f"rubric scale; brackets are 95% confidence intervals ({METHOD} over probes "
        "clustered by transcript and compaction point; n/a with one cluster).",
    ]
    if any(row.retention.value is not None for row in comparison.rows):
        notes.append(
            f"Retention vs `{CONTROL}`: a run's mean probe score over the uncompacted "
            f"control run's on the same probes ({probes}, scored in both); 1.00 keeps "
            "everything the control scored."
        )
    if comparison.reference is not None:
        notes.append(
            f"Paired differences: run minus the `{comparison.reference}` run on the same "
            f"probes ({probes}, scored in both): the mean of per-probe differences (of "
            "the probe's score, or its dimension score), which can differ from the "
            f"difference of the roll-ups above; 95% CI by {METHOD}."
        )
        notes.extend(_test_notes(comparison))
    if comparison.pooled:
        notes.append(
            "Pooled: the runs of one config that differ only in their probes (seed, "
            "transcripts, compaction or probe settings), each paired with its own reference "
            "run, resampled together."
        )
    return notes


# ---- Markdown -----------------------------------------------------------------------------


def markdown_table(header: list[str], body: list[list[Cell]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    aligns = ["---"] + ["---:"] * (len(header) - 1)
    rows = [line([c.text() for c in cells]) for cells in body]
    return "\n".join([line(header), "| " + " | ".join(aligns) + " |", *rows])


def to_markdown(comparison: Comparison, images: dict[str, str] | None = None) -> str:
    """The report as Markdown; ``images`` maps a caption to a PNG path relative to the file."""
    parts = [f"# {_title(comparison)}", ""]
    for note in _notes(comparison):
        parts += [note, ""]
    for heading, table in tables(comparison):
        parts += [f"## {heading}", "", markdown_table(*table), ""]
    for caption, src in (images or {}).items():
        parts += [f"## {caption}", "", f"![{caption}]({src})", ""]
    return "\n".join(parts)


# ---- HTML ---------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem;
       color: #222; max-width: 100rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right;
         white-space: nowrap; vertical-align: top; }
th { white-space: normal; max-width: 7rem; }
th { background: #f0f3f8; } td:first-child, th:first-child { text-align: left; }
td:first-child { white-space: normal; min-width: 9rem; max-width: 18rem; }
tr:nth-child(even) td { background: #fafafa; }
span.ci { color: #666; font-size: 0.75rem; }
td.sig { font-weight: 600; color: #1a5d1a; background: #eef7ee !important; }
p.note { color: #555; font-size: 0.9rem; max-width: 60rem; }
figure { margin: 1rem 0; } img { max-width: 100%; border: 1px solid #ddd; }
"""


def html_table(header: list[str], body: list[list[Cell]]) -> str:
    """Figures on the first line of a cell, their interval below in small type."""
    head = "".join(f"<th>{html.escape(h.replace('_', ' '))}</th>" for h in header)
    rows = []
    for cells in body:
        tds = []
        for cell in cells:
            attr, mark = (' class="sig"', " *") if cell.significant else ("", "")
            detail = "".join(
                f'<br><span class="ci">{html.escape(line)}</span>'
                for line in cell.detail.splitlines()
            )
            tds.append(f"<td{attr}>{html.escape(cell.main)}{mark}{detail}</td>")
        rows.append(f"<tr>{''.join(tds)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def to_html(comparison: Comparison, images: dict[str, Path] | None = None) -> str:
    """One HTML page; ``images`` maps a caption to a PNG file, inlined as a data URI."""
    title = html.escape(_title(comparison))
    notes = "".join(
        f'<p class="note">{html.escape(n).replace("`", "")}</p>' for n in _notes(comparison)
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title><style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        notes,
    ]
    for heading, table in tables(comparison):
        parts += [f"<h2>{html.escape(heading)}</h2>", html_table(*table)]
    for caption, png in (images or {}).items():
        alt = html.escape(caption)
        parts.append(f'<h2>{alt}</h2><figure><img alt="{alt}" src="{data_uri(png)}"></figure>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
