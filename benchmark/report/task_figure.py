"""The task-success figure: per policy (run), probe overall (x) against task success (y),
each with its 95% interval, in the run's MLflow colour and marker (``plots.styles``), named
beside its point as the Pareto plot names its points (``placement``).

No diagonal: the two axes are on different scales (rubric points, share of tasks), so
y = x means nothing; what the figure shows is whether the order along x is the order along
y, which the rank correlation in its title puts in a number. Written as a PNG for the
report, and as an RGB array for MLflow's image chart on the sweep's parent run
(``IMAGE_KEY``, beside ``headline/overall_95ci``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.report.compare import Comparison
from benchmark.report.placement import place_labels
from benchmark.report.plots import DPI, _errors, _pyplot, _save, styles
from benchmark.report.task_section import correlation_line
from benchmark.scoring import metric_names as names

IMAGE_KEY = f"{names.TASK_SUCCESS.rpartition('/')[0]}/probe_vs_success"


def task_figure(comparison: Comparison) -> Any:
    """The figure (matplotlib), or one saying that no run has both measures."""
    plt = _pyplot()
    task = comparison.task
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=DPI)
    scale = f" (0-{comparison.scale_max:g})" if comparison.scale_max else ""
    ax.set_xlabel(f"probe overall{scale}, 95% CI")
    ax.set_ylabel("task success (share of resumes), 95% CI")
    title = f"Probe score vs task success: {comparison.name}"
    if task is not None:
        title += f"\n{correlation_line(task.correlation)}"
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    shown = [
        p
        for p in (task.policies if task else [])
        if p.probe_overall.value is not None and p.success.value is not None
    ]
    if not shown:
        message = "no run has both a probe overall and a task success"
        ax.text(0.5, 0.5, message, ha="center", transform=ax.transAxes)
        fig.tight_layout()
        return fig
    look = dict(zip((r.run_id for r in comparison.rows), styles(comparison.rows), strict=True))
    names_at: dict[tuple[float, float], list[str]] = {}
    for policy in shown:
        colour, marker, _ = look.get(policy.run_id, (policy.colour or None, "o", ""))
        x, y = policy.probe_overall.value, policy.success.value
        ax.errorbar(
            [x],
            [y],
            xerr=_errors([policy.probe_overall]),
            yerr=_errors([policy.success]),
            fmt=marker,
            color=colour,
            markersize=7,
            elinewidth=1.5,
            capsize=4,
            zorder=3,
            label=policy.label,
        )
        names_at.setdefault((round(x, 6), round(y, 6)), []).append(policy.label)  # type: ignore[arg-type]
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.margins(x=0.15, y=0.1)  # room for the names of the outermost points
    fig.tight_layout()  # before placing the names: it moves the axes, and so the points
    place_labels(ax, list(names_at), [", ".join(labels) for labels in names_at.values()])
    return fig


def task_plot(comparison: Comparison, path: Path) -> Path:
    """``task_figure`` as a PNG."""
    return _save(task_figure(comparison), path)


def task_image(comparison: Comparison) -> Any:
    """``task_figure`` as an RGB array, for ``MlflowClient.log_image``."""
    import numpy as np

    fig = task_figure(comparison)
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()
    _pyplot().close(fig)
    return image
