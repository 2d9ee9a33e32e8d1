"""Write a report's files and log them as artifacts of the sweep's parent MLflow run (a new
``report:<source>`` run for an experiment, or a sweep logged before parents)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmark.report.compare import Comparison, compare
from benchmark.report.load import REPORT_TAG, SWEEP_TAG, Selection, load_table
from benchmark.report.plots import dimensions_plot, pareto_plot
from benchmark.report.render import to_html, to_markdown
from benchmark.tracking.sweep_parent import find_parent


class ReportFiles(BaseModel):
    folder: Path
    markdown: Path
    html: Path
    pareto: Path
    dimensions: Path
    comparison: Path
    run_id: str | None = None


def default_folder(selection: Selection) -> Path:
    """``reports/<name>``: a sweep's id is its (absolute) sweep dir, so its last two parts
    (``<date>_<time>`` for Hydra's default) name it; unsafe characters become ``_``."""
    name = selection.source
    if selection.kind == "sweep" and "/" in name:
        name = "_".join(p for p in name.rstrip("/").split("/")[-2:] if p)
    return Path("reports") / (re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "report")


def build_report(
    client: Any,
    selection: Selection,
    folder: Path | None = None,
    *,
    reference: str | None = "none",
    probe_type: str | None = None,
    log: bool = True,
) -> tuple[Comparison, ReportFiles]:
    """Compare the selected runs, write the five files, and (``log``) log them to MLflow."""
    tables = {run.run_id: load_table(client, run.run_id) for run in selection.runs}
    comparison = compare(
        selection,
        tables,
        reference=reference,
        probe_type=probe_type,
    )
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
    captions = {"Score vs tokens kept": files.pareto, "Rubric dimensions": files.dimensions}
    files.markdown.write_text(to_markdown(comparison, {k: v.name for k, v in captions.items()}))
    files.html.write_text(to_html(comparison, captions))
    files.comparison.write_text(comparison.model_dump_json(indent=1) + "\n")
    if log:
        files.run_id = log_report(client, selection, comparison, files)
    return comparison, files


def log_report(
    client: Any, selection: Selection, comparison: Comparison, files: ReportFiles
) -> str:
    """The sweep's parent run, or else a new run in the selection's experiment, holding the
    report's files; its id."""
    tags = {REPORT_TAG: "true", "report.kind": selection.kind, "report.source": selection.source}
    if comparison.reference is not None:
        tags["report.reference"] = comparison.reference
    tags["report.runs"] = str(len(selection.runs))  # a tag, not a param: a parent is reported again
    paths = (files.markdown, files.html, files.pareto, files.dimensions, files.comparison)
    parent = None
    if selection.kind == "sweep":
        parent = find_parent(client, selection.experiment_id, selection.source)
        tags[SWEEP_TAG] = selection.source  # an older sweep's own report run (no parent)
    if parent is not None:
        del tags[SWEEP_TAG]  # the parent is no job of the sweep: filters on `sweep` skip it
        for key, value in tags.items():
            client.set_tag(parent, key, value)
        for path in paths:
            client.log_artifact(parent, str(path))
        return parent
    run = client.create_run(
        selection.experiment_id, run_name=f"report:{selection.source}", tags=tags
    )
    run_id = run.info.run_id
    try:
        for path in paths:
            client.log_artifact(run_id, str(path))
    except Exception:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id)
    return run_id
