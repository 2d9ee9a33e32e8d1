"""What a sweep leaves when its last job ends: the comparison, where a person looks first.

Called once per sweep by the Hydra callback (``tracking/callbacks.py``), in the launching
process after every job has logged. It compares the sweep's runs as the report does and
puts the answer in three places: the sweep's parent run (its description, shown on the
run's page, holds each policy's overall with its interval, retention and tokens kept, and
where the report is; a figure of the overall with its intervals is a chart of it,
``overall_figure.py``; with ``report.auto`` the report's files are logged onto it), a saved
view of the experiment page that shows the same columns for the sweep's jobs
(``tracking/views.py``), and the console (the table, the view's link, the report command).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from benchmark.report.build import build_report
from benchmark.report.cells import Cell, interval_cell
from benchmark.report.compare import Comparison, Interval, Row, compare
from benchmark.report.load import load_table, load_task_points, select
from benchmark.report.overall_figure import IMAGE_KEY, overall_figure, run_colours
from benchmark.report.render import markdown_table
from benchmark.report.task_figure import IMAGE_KEY as TASK_IMAGE_KEY
from benchmark.report.task_figure import task_image
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.sweep import sweep_id
from benchmark.tracking.sweep_parent import find_parent
from benchmark.tracking.views import save_sweep_view, view_url

NOTE_TAG = "mlflow.note.content"  # what MLflow shows as a run's description
REFERENCE = "none"  # paired differences and retention against the uncompacted arm, if run
LOCAL_UI = "http://127.0.0.1:5000"  # `mlflow ui`'s default address


class SweepSummary(BaseModel):
    """What the console says at a sweep's end."""

    table: str
    parent_id: str | None
    view_link: str | None
    report: Path | None
    report_command: str
    ui_command: str | None


def summary_rows(comparison: Comparison) -> tuple[list[str], list[list[Cell]]]:
    """The comparison in four columns: what a person comes for; a fifth, task success, when
    runs resumed tasks (issue 29)."""
    header = ["policy", "overall [95% CI]", "retention vs none", "tokens kept"]
    body = [
        [
            Cell(row.label),
            interval_cell(row.overall),
            interval_cell(row.retention),
            Cell(_kept(row)),
        ]
        for row in comparison.rows
    ]
    if comparison.task is not None:
        success = {p.run_id: p.success for p in comparison.task.policies}
        header.append("task success [95% CI]")
        for row, cells in zip(comparison.rows, body, strict=True):
            cells.append(interval_cell(success.get(row.run_id, Interval())))
    return header, body


def _kept(row: Row) -> str:
    if row.kept_fraction is not None:
        return f"{100 * row.kept_fraction:.1f}%"
    return "-" if row.tokens_after is None else f"{row.tokens_after:,.0f}"


def summarize_sweep(
    tracking: TrackingConfig, sweep_dir: str | Path, auto: bool, out: Path | None = None
) -> SweepSummary:
    """Compare the sweep's finished runs, describe its parent run, save its view, and (with
    ``auto``) write the report to ``out`` (default ``<sweep dir>/report``) and log it."""
    from benchmark.report.load import client_for

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # one per run: noise
    local = tracking.uri is None
    client = client_for(tracking.uri, tracking.store_dir if local else None)
    selection = select(client, sweep_id(sweep_dir), tracking.experiment)
    reference = REFERENCE if any(r.policy == REFERENCE for r in selection.runs) else None
    ui = LOCAL_UI if local else str(tracking.uri)
    report = None
    if auto:
        folder = out or Path(sweep_dir) / "report"
        comparison, files = build_report(
            client, selection, folder, reference=reference, ui_url=None if local else ui
        )
        report = files.html
    else:
        tables = {run.run_id: load_table(client, run.run_id) for run in selection.runs}
        points = {run.run_id: load_task_points(client, run.run_id) for run in selection.runs}
        comparison = compare(selection, tables, reference=reference, task_points=points)
    command = f"python -m benchmark.report {comparison.name}"
    if local:
        command += f" --store-dir {tracking.store_dir}"
    table = markdown_table(*summary_rows(comparison))
    parent = find_parent(client, selection.experiment_id, selection.source)
    link = None
    if parent is not None:
        key = save_sweep_view(client, selection.experiment_id, parent, f"sweep {comparison.name}")
        link = view_url(ui, selection.experiment_id, key)
        client.set_tag(parent, NOTE_TAG, parent_note(comparison, table, link, command, auto))
        figure = overall_figure(comparison, run_colours(selection.runs))
        client.log_image(parent, figure, key=IMAGE_KEY, step=0, synchronous=True)
        if comparison.task is not None:
            image = task_image(comparison)
            client.log_image(parent, image, key=TASK_IMAGE_KEY, step=0, synchronous=True)
    store = Path(tracking.store_dir).resolve() / "mlflow.db"
    return SweepSummary(
        table=table,
        parent_id=parent,
        view_link=link,
        report=report,
        report_command=command,
        ui_command=f"mlflow ui --backend-store-uri sqlite:///{store}" if local else None,
    )


def parent_note(
    comparison: Comparison, table: str, link: str | None, command: str, logged: bool
) -> str:
    """The parent run's description (Markdown): the table first, then where to read more."""
    where = (
        "The full report (paired differences, per-type scores, plots) is `report.html` "
        "in this run's Artifacts."
        if logged
        else f"Make the full report with `{command}`."
    )
    scale = f", scores 0-{comparison.scale_max:g}" if comparison.scale_max else ""
    lines = [
        f"**Sweep {comparison.name}**: {len(comparison.rows)} runs{scale}, best first.",
        "",
        table,
        "",
        where,
    ]
    if link:
        lines += ["", f"These runs side by side in the runs table: [saved view]({link})."]
    return "\n".join(lines)


def console_text(summary: SweepSummary) -> str:
    """What the console prints at the sweep's end."""
    lines = ["", "Sweep comparison (95% intervals):", summary.table, ""]
    if summary.report is not None:
        lines.append(f"report: {summary.report} (also on the sweep's parent run in MLflow)")
    else:
        lines.append(f"report: {summary.report_command}")
    if summary.view_link:
        if summary.ui_command:
            lines.append(f"MLflow: {summary.ui_command}")
        lines.append(f"then open {summary.view_link}")
    return "\n".join(lines)
