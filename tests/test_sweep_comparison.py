"""A sweep's comparison where a person looks (issue 26): one three-policy sweep in a real
store, checked through MLflow's API (run colours, the parent's description and report,
the headline logged first) and in MLflow's own UI in headless Chromium at 1280 px (each
policy's overall with its interval on the first screen of the sweep's view, no click)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient
from test_sweeps import free_port, local_store, run_sweep

from benchmark.report.sweep_end import NOTE_TAG
from benchmark.scoring import metric_names as names
from benchmark.tracking.run_colours import RUN_COLOR_TAG
from benchmark.tracking.sweep_parent import PARENT_TAG
from benchmark.tracking.views import OVERALL_CI_TAG, VIEW_TAG_PREFIX, overall_ci_text, view_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from browser import Browser, stop_group  # noqa: E402  (scripts/ is not a package)
from screenshots import (  # noqa: E402
    ScreenshotError,
    find_tools,
    start_server,
    wait_until_up,
)

EXPERIMENT = "compaction-benchmark"
POLICIES = ("none", "truncate", "observation_mask")
CI_TEXT = re.compile(r"^\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]$")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """The sweep as a user runs it (report.auto on by default), and its printed summary."""
    tmp = tmp_path_factory.mktemp("comparison")
    proc = run_sweep(
        [*local_store(tmp), f"policy={','.join(POLICIES)}", "transcript.sessions=3"]
        + [f"hydra.sweep.dir={tmp / 'sw'}"],
        tmp,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in runs if PARENT_TAG in r.data.tags]
    jobs = {r.data.tags["policy"]: r for r in runs if PARENT_TAG not in r.data.tags}
    return tmp, proc, client, experiment, parent, jobs


def test_the_parent_and_the_console_carry_the_comparison(sweep):
    tmp, proc, client, experiment, parent, jobs = sweep
    assert sorted(jobs) == sorted(POLICIES)
    # One colour per policy, distinct within the sweep.
    colours = {p: run.data.tags[RUN_COLOR_TAG] for p, run in jobs.items()}
    assert len(set(colours.values())) == len(POLICIES)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours.values())
    for run in jobs.values():
        metrics = run.data.metrics
        # The headline is the first metric logged, its interval right after it.
        assert list(metrics)[:3] == [names.OVERALL, *names.ci_names(names.OVERALL)]
        # Values as MLflow shows them: 3 decimals at most.
        assert all(len(repr(v).partition(".")[2]) <= 3 for v in metrics.values() if v >= 0.01)
        shown = overall_ci_text(metrics)
        assert CI_TEXT.match(shown) and run.data.tags[OVERALL_CI_TAG] == shown
        # The transcripts are one dataset input, named once.
        assert [i.dataset.name for i in run.inputs.dataset_inputs] == ["3 generated sessions"]
    # The parent's description: every policy's overall with its interval, on its own row.
    note = parent.data.tags[NOTE_TAG]
    rows = {line.split("|")[1].strip(): line for line in note.splitlines() if line.count("|") > 4}
    for policy, run in jobs.items():
        assert run.data.tags[OVERALL_CI_TAG] in rows[policy]
    assert "report.html" in note and "viewStateShareKey=" in note
    # The report is on the parent (report.auto), and in the sweep folder.
    logged = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"report.html", "report.md", "comparison.json"} <= logged
    assert (tmp / "sw" / "report" / "report.html").is_file()
    # The console ends with the same table, the report and the view's link.
    out = proc.stdout
    for run in jobs.values():
        assert run.data.tags[OVERALL_CI_TAG] in out
    assert str(tmp / "sw" / "report" / "report.html") in out
    view = f"{VIEW_TAG_PREFIX}benchmark-sweep-{parent.info.run_id}"
    assert view in client.get_experiment(experiment.experiment_id).tags
    assert "viewStateShareKey=benchmark-sweep-" in out and "mlflow ui --backend-store-uri" in out


def test_report_auto_false_still_prints_and_describes(tmp_path, mlflow_store):
    proc = run_sweep(
        [*local_store(tmp_path), "policy=none,truncate", "report.auto=false"]
        + [f"hydra.sweep.dir={tmp_path / 'sw'}", "transcript.sessions=3"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "python -m benchmark.report" in proc.stdout and "[" in proc.stdout
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    (parent,) = [
        r for r in client.search_runs([experiment.experiment_id]) if PARENT_TAG in r.data.tags
    ]
    assert "python -m benchmark.report" in parent.data.tags[NOTE_TAG]
    assert not (tmp_path / "sw" / "report").exists()
    assert "report.html" not in {a.path for a in client.list_artifacts(parent.info.run_id)}


# ---- MLflow's own UI ----------------------------------------------------------------------

ROWS = """(() => {  // each row of the runs table: its name, overall_ci cell and where they are
  const grid = document.querySelector('.ag-root-wrapper');
  if (!grid) return null;
  const box = grid.getBoundingClientRect();
  const rows = {};
  for (const cell of document.querySelectorAll('.ag-row .ag-cell')) {
    const row = cell.closest('.ag-row').getAttribute('row-index');
    const col = cell.getAttribute('col-id');
    const r = cell.getBoundingClientRect();
    const seen = r.left >= box.left && r.right <= Math.min(box.right, innerWidth) + 1
      && r.top >= 0 && r.bottom <= innerHeight;
    (rows[row] = rows[row] || {})[col] = {text: cell.innerText.trim(), seen};
  }
  return JSON.stringify(Object.values(rows)); })()"""
NAME_COL = "attributes.`Run Name`"
CI_COL = f"tags.`{OVERALL_CI_TAG}`"
OVERALL_COL = f"metrics.`{names.OVERALL}`"


def test_mlflow_ui_shows_every_policy_overall_with_its_interval_at_once(sweep):
    try:
        chromium, mlflow_cmd = find_tools()
    except ScreenshotError as exc:
        pytest.skip(str(exc))
    tmp, _, _, experiment, parent, jobs = sweep
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(mlflow_cmd, tmp / "mlruns", port, tmp)
    try:
        wait_until_up(url, server)
        link = view_url(url, experiment.experiment_id, f"benchmark-sweep-{parent.info.run_id}")
        assert link in parent.data.tags[NOTE_TAG].replace("127.0.0.1:5000", f"127.0.0.1:{port}")

        async def first_screen() -> list[dict]:
            async with Browser(chromium, height=800) as browser:
                await browser.open(link)
                await browser.wait_for(
                    f"(() => {{ const r = {ROWS}; return r && JSON.parse(r).filter("
                    f"x => x[{json.dumps(CI_COL)}]).length >= {len(POLICIES)}; }})()",
                    "the sweep's runs with their overall_ci",
                    timeout=90,
                )
                return json.loads(await browser.js(ROWS))

        rows = asyncio.run(first_screen())
    finally:
        stop_group(server)
    # The name cell holds its colour picker's value on a line before the name.
    for row in rows:
        if NAME_COL in row:
            row[NAME_COL]["text"] = row[NAME_COL]["text"].splitlines()[-1]
    shown = {row[NAME_COL]["text"]: row for row in rows if NAME_COL in row}
    assert sorted(shown) == sorted(POLICIES)
    for policy, run in jobs.items():
        row = shown[policy]
        assert row[NAME_COL]["seen"] and row[CI_COL]["seen"] and row[OVERALL_COL]["seen"]
        assert row[CI_COL]["text"] == run.data.tags[OVERALL_CI_TAG]
        assert float(row[OVERALL_COL]["text"]) == run.data.metrics[names.OVERALL]
    # Best first: the view sorts on the overall.
    order = [row[NAME_COL]["text"] for row in rows if NAME_COL in row]
    assert order == sorted(POLICIES, key=lambda p: -jobs[p].data.metrics[names.OVERALL])
