"""Write a report's files and log them as artifacts of the sweep's parent MLflow run (a new
``report:<source>`` run for an experiment, or a sweep logged before parents)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from benchmark.report.compare import Comparison, compare
from benchmark.report.layout import short_name
from benchmark.report.load import REPORT_TAG, SWEEP_TAG, Selection, load_table, load_task_points
from benchmark.report.plots import dimensions_plot, pareto_plot
from benchmark.report.render import to_html, to_markdown
from benchmark.report.task_figure import task_plot
from benchmark.report.task_section import CAPTION as TASK_CAPTION
from benchmark.tracking.sweep_parent import find_parent


class ReportFiles(BaseModel):
    folder: Path
    markdown: Path
    html: Path
    pareto: Path
    dimensions: Path
    comparison: Path
    task: Path | None = None  # task_success.png, when runs resumed tasks (issue 29)
    run_id: str | None = None


def default_folder(selection: Selection) -> Path:
    """``reports/<short name>`` (see ``layout.short_name``)."""
    return Path("reports") / short_name(selection.kind, selection.source)


def build_report(
    client: Any,
    selection: Selection,
    folder: Path | None = None,
    *,
    reference: str | None = "none",
    probe_type: str | None = None,
    log: bool = True,
    ui_url: str | None = None,
) -> tuple[Comparison, ReportFiles]:
    """Compare the selected runs, write the five files, and (``log``) log them to MLflow.
    With ``ui_url`` (the MLflow UI's address) run ids link to it and the logged Markdown's
    images load from it."""
    tables = {run.run_id: load_table(client, run.run_id) for run in selection.runs}
    comparison = compare(
        selection,
        tables,
        reference=reference,
        probe_type=probe_type,
        task_points={run.run_id: load_task_points(client, run.run_id) for run in selection.runs},
    )
    comparison.ui_url = ui_url.rstrip("/") if ui_url else None
    folder = folder or default_folder(selection)
    folder.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(
        folder=folder,
        markdown=folder / "report.md",
        html=folder / "report.html",
        pareto=folder / "pareto.png",
        dimensions=folder / "dimensions.png",
        comparison=folder / "comparison.json",
    )
    pareto_plot(comparison, files.pareto)
    dimensions_plot(comparison, files.dimensions)
    if comparison.task is not None:
        files.task = task_plot(comparison, folder / "task_success.png")
    files.markdown.write_text(to_markdown(comparison, {k: v.name for k, v in _plots(files)}))
    files.html.write_text(to_html(comparison, dict(_plots(files))))
    files.comparison.write_text(comparison.to_json())
    if log:
        files.run_id = log_report(client, selection, comparison, files)
    return comparison, files


def _plots(files: ReportFiles) -> list[tuple[str, Path]]:
    """(caption, PNG) of the report's figures, in page order (the task figure is drawn in
    its own section, ``render``)."""
    plots = [("Score vs tokens kept", files.pareto), ("Rubric dimensions", files.dimensions)]
    return plots + ([(TASK_CAPTION, files.task)] if files.task else [])


def artifact_url(ui_url: str | None, run_id: str, name: str) -> str:
    """A run's artifact as an image link in the logged ``report.md``. MLflow's Markdown view
    shows an image only from an absolute http(s) URL (a relative one is printed as text),
    so with the UI's address known, its ``get-artifact`` URL; else the file name, which
    works in any other viewer and after a download."""
    if not ui_url:
        return name
    return f"{ui_url}/get-artifact?path={quote(name)}&run_uuid={run_id}"


def log_report(
    client: Any, selection: Selection, comparison: Comparison, files: ReportFiles
) -> str:
    """The sweep's parent run, or else a new run in the selection's experiment, holding the
    report's files (the local ``report.md`` links its plots by file name; the logged one
    through ``artifact_url``); its id."""
    tags = {REPORT_TAG: "true", "report.kind": selection.kind, "report.source": selection.source}
    if comparison.reference is not None:
        tags["report.reference"] = comparison.reference
    tags["report.runs"] = str(len(selection.runs))  # a tag, not a param: a parent is reported again
    paths = (files.html, files.pareto, files.dimensions, files.comparison)
    paths += (files.task,) if files.task else ()
    parent = None
    if selection.kind == "sweep":
        parent = find_parent(client, selection.experiment_id, selection.source)
        tags[SWEEP_TAG] = selection.source  # an older sweep's own report run (no parent)
    if parent is not None:
        del tags[SWEEP_TAG]  # the parent is no job of the sweep: filters on `sweep` skip it
        for key, value in tags.items():
            client.set_tag(parent, key, value)
        _log_files(client, parent, paths, comparison, files)
        return parent
    run = client.create_run(
        selection.experiment_id, run_name=f"report:{selection.source}", tags=tags
    )
    run_id = run.info.run_id
    try:
        _log_files(client, run_id, paths, comparison, files)
    except Exception:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id)
    return run_id


def _log_files(
    client: Any, run_id: str, paths: tuple[Path, ...], comparison: Comparison, files: ReportFiles
) -> None:
    """The report's files into ``run_id``; ``report.md`` as MLflow's UI shows it (its
    images through ``artifact_url``)."""
    for path in paths:
        client.log_artifact(run_id, str(path))
    with tempfile.TemporaryDirectory() as tmp:
        markdown = Path(tmp) / files.markdown.name
        images = {k: artifact_url(comparison.ui_url, run_id, v.name) for k, v in _plots(files)}
        markdown.write_text(to_markdown(comparison, images))
        client.log_artifact(run_id, str(markdown))
