"""The sweep's overall scores with their 95% intervals as one figure MLflow can show.

MLflow's charts draw one bar per run and metric and no error bar, so an interval was two
more bar charts. Logged onto the sweep's parent run as an image with a key
(``headline/overall_95ci``), the figure is a chart of its own in the parent's
``headline`` section and in the experiment's chart view: a bar per run, best first, in
the run's MLflow colour, with its interval as a whisker and the numbers written beside it.
"""

from __future__ import annotations

from typing import Any

from benchmark.report.compare import Comparison
from benchmark.scoring import metric_names as names
from benchmark.tracking.run_colours import RUN_COLOR_TAG, colour_at

IMAGE_KEY = f"{names.OVERALL}_95ci"
DPI = 100


def overall_figure(comparison: Comparison, colours: dict[str, str]) -> Any:
    """An RGB array of the figure (``colours``: run id -> the run's MLflow colour)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for r in comparison.rows if r.overall.value is not None]
    fig, ax = plt.subplots(figsize=(7, 0.45 * max(3, len(rows)) + 1.1), dpi=DPI)
    top = comparison.scale_max or max([r.overall.high or r.overall.value for r in rows] or [1])
    for y, row in enumerate(reversed(rows)):  # best at the top
        value = row.overall.value
        low, high = row.overall.low, row.overall.high
        has_ci = low is not None and high is not None
        error = [[value - low], [high - value]] if has_ci else None  # type: ignore[operator]
        colour = colours.get(row.run_id) or colour_at(comparison.rows.index(row))
        ax.barh(y, value, color=colour, xerr=error, capsize=4, error_kw={"ecolor": "#333333"})
        shown = f"{value:.2f} [{low:.2f}, {high:.2f}]" if has_ci else f"{value:.2f} [n/a]"
        ax.text(top * 1.02, y, shown, va="center", fontsize=9)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.label for r in reversed(rows)], fontsize=9)
    ax.set_xlim(0, top * 1.45)
    ax.set_xlabel(f"overall score (0-{top:g}), 95% interval")
    ax.set_title(f"Overall by policy: {comparison.name}", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()
    plt.close(fig)
    return image


def run_colours(runs: list[Any]) -> dict[str, str]:
    """Each run's MLflow colour, where its run carries one (``RunData`` with tags)."""
    return {r.run_id: r.tags[RUN_COLOR_TAG] for r in runs if r.tags.get(RUN_COLOR_TAG)}
