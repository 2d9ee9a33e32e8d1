"""The report's task-success section (issue 29) over runs logged into a real MLflow store.

The runs are built so the answers are known: four policies whose probe overall and task
success rise together on every point (Spearman rho = 1), whose failed resumes all lost a
probe fact (a 2x2 of 18/6 against 0/24), and a fifth run without the task arm that takes
no part. A sweep of runs without the arm gets no section at all.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchmark.report.__main__ import main
from benchmark.report.compare import Comparison
from benchmark.report.load import client_for
from benchmark.report.task_points import TaskPoint
from benchmark.report.task_stats import loss_vs_failure, rank_correlation, spearman
from benchmark.scoring import metric_names as names
from benchmark.tracking.run_colours import RUN_COLOR_TAG
from benchmark.tracking.sweep_parent import PARENT_TAG

EXPERIMENT = "compaction-benchmark"
CLUSTERS = 12
CELLS = ("lost_failed", "lost_succeeded", "kept_failed", "kept_succeeded")
# (policy, run colour) from the worst to the best: probe overall and success rise together.
POLICIES = [
    ("truncate", "#de7921"),
    ("observation_mask", "#8a63bf"),
    ("hermes", "#3caa60"),
    ("none", "#2272b4"),
]


def _row(j: int, k: int, policy: str) -> dict:
    """Policy ``j`` at cluster ``k``: its resume succeeds on the first 3(j+1) clusters; a
    failed resume always lost a probe fact, a successful one on every third cluster (never
    for the uncompacted ``none``); the control fails on the last cluster only."""
    success = k < 3 * (j + 1)
    lost = 2 if not success else (1 if k % 3 == 0 and policy != "none" else 0)
    control = k != CLUSTERS - 1
    return {
        "transcript": f"session-{k}.jsonl",
        "task_id": f"task-{k}",
        "domain": "airline",
        "point": 1,
        "policy": policy,
        "reward": float(success),
        "success": success,
        "reward_control": float(control),
        "success_control": control,
        "steps": 10 + j,
        "tokens": 1000 * (j + 1),
        "repeated_tool_calls": 3 - j,
        "probe_overall": 1.0 + j + 0.01 * k,
        "probes": 4,
        "facts_lost": lost,
        "cluster": f"session-{k}.jsonl#1",
    }


def _metrics(j: int) -> dict[str, float]:
    overall = 1.0 + j + 0.055  # the rows' mean
    success = (j + 1) / 4
    return {
        names.OVERALL: overall,
        f"{names.OVERALL}_lower": overall - 0.2,
        f"{names.OVERALL}_upper": overall + 0.2,
        names.PROBES_TOTAL: 48,
        names.TOKENS_AFTER: 1000.0 * (j + 1),
        names.TASK_SUCCESS: success,
        f"{names.TASK_SUCCESS}_lower": max(0.0, success - 0.1),
        f"{names.TASK_SUCCESS}_upper": min(1.0, success + 0.1),
        names.TASK_SUCCESS_CONTROL: 11 / 12,
        names.TASK_RETENTION: success / (11 / 12),
        names.TASK_STEPS_TO_FINISH: 10.0 + j,
        names.TASK_TOKENS_TO_FINISH: 1000.0 * (j + 1),
        names.TASK_REPEATED_TOOL_CALLS: 3.0 - j,
    }


def _run(client, experiment_id: str, sweep: str, policy: str, metrics: dict, **tags) -> str:
    run = client.create_run(
        experiment_id,
        run_name=policy,
        tags={"policy": policy, "sweep": sweep, "sweep_overrides": "policy=a,b", **tags},
    )
    run_id = run.info.run_id
    for key, value in metrics.items():
        client.log_metric(run_id, key, value)
    return run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory, migrated_db) -> dict:
    """Three sweeps in one store: ``task`` (four policies with the arm, one without, and
    a parent run), ``plain`` (two runs without the arm) and ``bad`` (a broken table)."""
    from benchmark.tracking.mlflow_store import prepare_store

    root = tmp_path_factory.mktemp("task_report")
    folder = root / "mlruns"
    folder.mkdir()
    shutil.copyfile(migrated_db, folder / migrated_db.name)
    experiment_id = prepare_store(folder, EXPERIMENT)
    client = client_for(None, folder)
    sweeps = {
        name: str((root / "multirun" / "2025-01-01" / f"1{i}-00-00").resolve())
        for i, name in enumerate(("task", "plain", "bad"))
    }
    parent = client.create_run(
        experiment_id, run_name="sweep", tags={PARENT_TAG: sweeps["task"], "report": "true"}
    ).info.run_id
    for j, (policy, colour) in enumerate(POLICIES):
        run_id = _run(
            client, experiment_id, sweeps["task"], policy, _metrics(j), **{RUN_COLOR_TAG: colour}
        )
        rows = [_row(j, k, policy) for k in range(CLUSTERS)]
        client.log_text(run_id, json.dumps(rows), names.TASK_POINTS_TABLE)
        client.set_terminated(run_id)
    plain = {names.OVERALL: 0.5, names.PROBES_TOTAL: 48, names.TOKENS_AFTER: 500.0}
    extra = _run(client, experiment_id, sweeps["task"], "anchor_index", plain)
    client.set_terminated(extra)
    for policy, value in (("none", 4.0), ("truncate", 1.0)):
        metrics = {**plain, names.OVERALL: value}
        run_id = _run(client, experiment_id, sweeps["plain"], policy, metrics)
        client.set_terminated(run_id)
    for policy, table in (("none", [{**_row(0, 0, "none"), "success": "maybe"}]), ("x", "{")):
        run_id = _run(client, experiment_id, sweeps["bad"], policy, _metrics(0))
        text = table if isinstance(table, str) else json.dumps(table)
        client.log_text(run_id, text, names.TASK_POINTS_TABLE)
        client.set_terminated(run_id)
    return {"folder": folder, "root": root, "client": client, "parent": parent, **sweeps}


def _report(store: dict, sweep: str, out: Path) -> tuple[int, str, str]:
    args = [sweep, "--store-dir", str(store["folder"]), "--out", str(out), "--no-log"]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(args)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def task_report(store) -> dict:
    out = store["root"] / "report-task"
    code, stdout, stderr = _report(store, store["task"], out)
    assert code == 0, stderr
    return {"out": out, "stdout": stdout, "json": json.loads((out / "comparison.json").read_text())}


def test_the_correlation_is_one_with_its_bootstrap_interval(task_report):
    correlation = task_report["json"]["task"]["correlation"]
    assert correlation["rho"] == pytest.approx(1.0)
    assert correlation["high"] == pytest.approx(1.0)
    # Resamples that miss every cluster where two policies differ tie them (rho 0.95).
    assert 0.8 <= correlation["low"] < 1.0
    assert (correlation["policies"], correlation["points"], correlation["clusters"]) == (4, 48, 12)


def test_the_two_by_two_counts_and_failure_rates(task_report):
    task = task_report["json"]["task"]
    lost = task["lost"]
    assert [lost[k] for k in CELLS] == [18, 6, 0, 24]
    assert (lost["rate_lost"], lost["rate_kept"], lost["difference"]) == (0.75, 0.0, 0.75)
    assert 0 < lost["low"] <= 0.75 <= lost["high"] <= 1.0
    control = task["lost_control"]
    assert [control[k] for k in CELLS] == [3, 21, 1, 23]
    assert control["points"] == 48


def test_the_section_reads_in_markdown_html_and_the_terminal(task_report):
    out = task_report["out"]
    markdown = (out / "report.md").read_text()
    section = markdown[markdown.index("## Task success") : markdown.index("## Score vs tokens")]
    assert "Spearman rho = 1.00 [" in section and "over 4 policies, 48 points" in section
    assert "also finish more tasks" in section and "fails its resume more often" in section
    assert "| some lost (facts_lost > 0) | 18 | 6 | 0.75 | 3 | 0.12 |" in section
    assert "| none lost (facts_lost = 0) | 0 | 24 | 0.00 | 1 | 0.04 |" in section
    assert "| none | 4.05 [3.85, 4.25] | 1.00 [0.90, 1.00] |" in section
    assert "anchor_index" not in section  # no task arm: no part in the section
    assert "![Probe score vs task success](task_success.png)" in section
    assert "Task success: at each compaction point" in markdown[markdown.index("## Method") :]
    page = (out / "report.html").read_text()
    assert "<h2>Task success</h2>" in page and "Spearman rho = 1.00 [" in page
    assert page.count("data:image/png;base64,") == 3
    stdout = task_report["stdout"]
    assert "Spearman rho = 1.00 [" in stdout and str(out / "task_success.png") in stdout


def test_the_figure_draws_each_policy_in_its_run_colour_and_names_it(task_report):
    from matplotlib.colors import to_hex

    from benchmark.report.task_figure import task_figure

    png = task_report["out"] / "task_success.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    comparison = Comparison.model_validate(task_report["json"])
    fig = task_figure(comparison)
    ax = fig.axes[0]
    labels = {t.get_text() for t in ax.texts if t.get_text()}
    assert labels == {policy for policy, _ in POLICIES}
    points = [line for line in ax.lines if line.get_marker() not in ("", "None")]
    markers = {to_hex(line.get_color()) for line in points}
    assert markers == {colour for _, colour in POLICIES}
    assert "Spearman rho = 1.00" in ax.get_title()


def test_the_sweep_end_gains_a_task_column_and_logs_the_figure_on_the_parent(store, tmp_path):
    from benchmark.report.sweep_end import summarize_sweep
    from benchmark.tracking.config import TrackingConfig

    tracking = TrackingConfig(store_dir=str(store["folder"]), experiment=EXPERIMENT)
    summary = summarize_sweep(tracking, store["task"], auto=True, out=tmp_path / "report")
    header = summary.table.splitlines()[0]
    assert header.endswith("| task success [95% CI] |")
    lines = {line.split(" | ")[0].lstrip("| "): line for line in summary.table.splitlines()}
    assert lines["none"].endswith("| 1.00 [0.90, 1.00] |")
    assert lines["truncate"].endswith("| 0.25 [0.15, 0.35] |")
    assert lines["anchor_index"].endswith("| - |")
    client = store["client"]
    images = [a.path for a in client.list_artifacts(store["parent"], "images")]
    assert any(p.startswith("images/task~probe_vs_success+step+0") for p in images)
    logged = {a.path for a in client.list_artifacts(store["parent"])}
    assert "task_success.png" in logged
    plain = summarize_sweep(tracking, store["plain"], auto=False)
    assert "task success" not in plain.table


def test_a_sweep_without_the_task_arm_has_no_task_section(store):
    out = store["root"] / "report-plain"
    code, stdout, stderr = _report(store, store["plain"], out)
    assert code == 0, stderr
    assert "task" not in json.loads((out / "comparison.json").read_text())
    assert "Task success" not in (out / "report.md").read_text()
    assert "Task success" not in (out / "report.html").read_text()
    assert "Spearman" not in stdout and not (out / "task_success.png").exists()


def test_a_broken_points_table_is_one_line_naming_run_row_and_field(store, tmp_path):
    code, _, stderr = _report(store, store["bad"], tmp_path / "out")
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: run ")
    assert names.TASK_POINTS_TABLE in lines[0]
    assert "row 0: success:" in lines[0] or "not JSON" in lines[0]
    assert "Traceback" not in stderr


# ---- the statistics alone --------------------------------------------------------------


def _points(successes: list[list[bool]], overall: list[float]) -> list[list[TaskPoint]]:
    """One group per policy: its per-cluster success, one probe overall for all points."""
    return [
        [
            TaskPoint.model_validate(
                {**_row(0, k, f"p{j}"), "success": s, "probe_overall": overall[j]}
            )
            for k, s in enumerate(row)
        ]
        for j, row in enumerate(successes)
    ]


def test_spearman_matches_scipy_with_ties():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(50, 6)).astype(float)
    y = rng.integers(0, 4, size=(50, 6)).astype(float)
    ours = spearman(x, y)
    for i in range(len(x)):
        expected = spearmanr(x[i], y[i]).statistic
        assert (np.isnan(ours[i]) and np.isnan(expected)) or ours[i] == pytest.approx(expected)


def test_a_reversed_order_is_minus_one_and_fewer_than_three_policies_is_na():
    successes = [[k < 9 for k in range(12)], [k < 6 for k in range(12)], [k < 3 for k in range(12)]]
    reversed_ = rank_correlation(_points(successes, [1.0, 2.0, 3.0]))
    assert reversed_.rho == pytest.approx(-1.0) and reversed_.low == pytest.approx(-1.0)
    assert reversed_.high is not None and reversed_.high <= -0.8
    assert rank_correlation(_points(successes, [1.0, 2.0, 3.0])) == reversed_  # seeded
    two = rank_correlation(_points(successes[:2], [1.0, 2.0]))
    assert two.rho is None and "needs 3" in two.note and two.policies == 2
    flat = rank_correlation(_points([[True] * 12] * 3, [1.0, 2.0, 3.0]))
    assert flat.rho is None and "same" in flat.note


def test_one_cluster_gives_an_estimate_without_interval():
    table = loss_vs_failure(
        [
            TaskPoint.model_validate({**_row(0, 5, "a"), "facts_lost": 1}),
            TaskPoint.model_validate({**_row(0, 5, "b"), "facts_lost": 0, "success": True}),
        ]
    )
    assert (table.rate_lost, table.rate_kept, table.difference) == (1.0, 0.0, 1.0)
    assert table.low is None and table.high is None and table.clusters == 1
    assert loss_vs_failure([]).difference is None
