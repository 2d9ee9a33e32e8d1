"""The report's two figures as PNG files (matplotlib, Agg backend: no display needed).

Each run is drawn in its MLflow run colour (``Row.colour``), so a policy looks the same
in the report as in MLflow's charts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.report.compare import Comparison, Interval, Row
from benchmark.report.placement import place_labels

DPI = 100
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "oo")
FRONT = "#888888"  # the Pareto front: neutral, never a run's colour


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def kept_axis(rows: list[Row]) -> tuple[list[float | None], str]:
    """x values of the Pareto plot: kept share of the pre-compaction tokens when every run
    has it (comparable across transcripts), else the mean kept tokens."""
    if rows and all(r.kept_fraction is not None for r in rows):
        return [100 * r.kept_fraction for r in rows], "tokens kept (% of pre-compaction context)"  # type: ignore[operator]
    return [r.tokens_after for r in rows], "tokens kept after compaction"


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of points no other point beats (fewer or equal tokens, higher or equal score,
    one of them strictly), ordered by tokens."""
    front = [
        i
        for i, (x, y) in enumerate(points)
        if not any(
            (x2 <= x and y2 >= y) and (x2 < x or y2 > y)
            for j, (x2, y2) in enumerate(points)
            if j != i
        )
    ]
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))


def _errors(cells: list[Interval]) -> tuple[list[float], list[float]] | None:
    """Asymmetric error bar lengths; None when no cell has a CI."""
    if not any(c.low is not None and c.high is not None for c in cells):
        return None
    below, above = [], []
    for c in cells:
        has = c.value is not None and c.low is not None and c.high is not None
        below.append(max(0.0, c.value - c.low) if has else 0.0)  # type: ignore[operator]
        above.append(max(0.0, c.high - c.value) if has else 0.0)  # type: ignore[operator]
    return below, above


def styles(rows: list[Row]) -> list[tuple[str, str, str]]:
    """(colour, marker, hatch) of each run, the same in both figures: its MLflow run colour
    (``Row.colour``); runs sharing a colour (one policy over seeds) get the next marker
    and bar hatch, so they still tell apart."""
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        nth = seen.get(row.colour, 0)
        seen[row.colour] = nth + 1
        out.append((row.colour, MARKERS[nth % len(MARKERS)], HATCHES[nth % len(HATCHES)]))
    return out


def pareto_plot(comparison: Comparison, path: Path) -> Path:
    """``pareto_figure`` as a PNG."""
    return _save(pareto_figure(comparison), path)


def dimensions_plot(comparison: Comparison, path: Path) -> Path:
    """``dimensions_figure`` as a PNG."""
    return _save(dimensions_figure(comparison), path)


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


def pareto_figure(comparison: Comparison) -> Any:
    """Overall score (with CI) against tokens kept: one point per run in its colour, named
    beside it (labels placed apart, ``placement``), and a grey Pareto front through the
    runs nothing beats (grey: it is no run's colour)."""
    plt = _pyplot()
    look = styles(comparison.rows)
    rows = [(i, r) for i, r in enumerate(comparison.rows) if r.overall.value is not None]
    xs_all, xlabel = kept_axis([r for _, r in rows])
    shown = [(i, r, x) for (i, r), x in zip(rows, xs_all, strict=True) if x is not None]
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=DPI)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("overall score (95% CI)")
    ax.set_title(f"Score vs tokens kept: {comparison.name}", fontsize=10)
    ax.grid(True, alpha=0.3)
    if not shown:
        ax.text(0.5, 0.5, "no run has an overall score", ha="center", transform=ax.transAxes)
        fig.tight_layout()
        return fig
    xs = [x for _, _, x in shown]
    ys = [r.overall.value for _, r, _ in shown]
    front = pareto_front(list(zip(xs, ys, strict=True)))  # type: ignore[arg-type]
    ax.plot(
        [xs[i] for i in front],
        [ys[i] for i in front],
        "--",
        color=FRONT,
        linewidth=1.5,
        drawstyle="steps-post",
        zorder=2,
        label="Pareto front",
    )
    ax.scatter(
        [xs[i] for i in front],
        [ys[i] for i in front],
        s=180,
        facecolors="none",
        edgecolors=FRONT,
        linewidths=2,
        zorder=4,
    )
    names: dict[tuple[float, float], list[str]] = {}
    for index, row, x in shown:
        colour, marker, _ = look[index]
        ax.errorbar(
            [x],
            [row.overall.value],
            yerr=_errors([row.overall]),
            fmt=marker,
            color=colour,
            markersize=7,
            elinewidth=1.5,
            capsize=4,
            zorder=3,
            label=row.label,
        )
        key = (round(x, 6), round(row.overall.value, 6))  # type: ignore[arg-type]
        names.setdefault(key, []).append(row.label)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.margins(x=0.15, y=0.1)  # room for the names of the outermost points
    fig.tight_layout()  # before placing the names: it moves the axes, and so the points
    place_labels(ax, list(names), [", ".join(labels) for labels in names.values()])
    return fig


def dimensions_figure(comparison: Comparison) -> Any:
    """Grouped bars: one group per rubric dimension, one bar per run in its colour (hatched
    when an earlier run has that colour), CI whiskers."""
    plt = _pyplot()
    dims = comparison.dimensions
    rows = comparison.rows
    look = styles(rows)
    width = 0.8 / max(1, len(rows))
    fig, ax = plt.subplots(figsize=(max(9, 1.6 * len(dims) + 0.3 * len(rows)), 5), dpi=DPI)
    for i, row in enumerate(rows):
        colour, _, hatch = look[i]
        cells = [row.dimensions.get(d, Interval()) for d in dims]
        offsets = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(dims))]
        ax.bar(
            offsets,
            [c.value if c.value is not None else 0.0 for c in cells],
            width,
            yerr=_errors(cells),
            capsize=3,
            color=colour,
            hatch=hatch,
            edgecolor="white" if hatch else None,
            error_kw={"elinewidth": 1, "ecolor": "#333333"},
            label=row.label,
        )
    ax.set_xticks(range(len(dims)))
    ax.set_xticklabels([d.replace("_", "\n") for d in dims], fontsize=9)
    ax.set_ylabel("dimension score")
    ax.set_title(f"Rubric dimensions: {comparison.name}", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    if rows:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig
