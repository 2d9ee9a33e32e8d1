"""stats.cluster_by: logs replaying one task cluster as one with ``task`` (fewer clusters, a
wider interval), and a job clustering them apart says so (log, manifest, scorecard)."""

from __future__ import annotations

import io
import logging
import shutil
from pathlib import Path

import pytest
from conftest import compose_config, swe_agent_job
from rich.console import Console

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.run.pipeline import run_job
from benchmark.scoring import metric_names as names
from benchmark.scoring import scorecard
from benchmark.transcript.formats import import_file

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "swe_agent"
SLUGIFY = FIXTURES / "slugify_function_calls.traj"


def _logs(tmp_path: Path) -> Path:
    """Three runs of one task (copies under other names) and one of another."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(3):
        shutil.copy(SLUGIFY, folder / f"run{i}.traj")
    shutil.copy(FIXTURES / "timeout_reused_call_ids.traj", folder / "other.traj")
    return folder


def _job(folder: Path, cluster_by: str, tmp_path: Path):
    cfg = compose_config(
        [
            "transcript=files",
            f"transcript.path={folder}",
            "tracking=disabled",
            f"cache.dir={tmp_path / 'cache'}",
            "compaction.context_window=300",
            "compaction.tail_tokens=60",
            "policy=truncate",
            f"stats.cluster_by={cluster_by}",
        ]
    )
    return run_job(validate(cfg))


def test_task_clusters_are_fewer_and_the_interval_wider(tmp_path, caplog):
    folder = _logs(tmp_path)
    with caplog.at_level(logging.WARNING):
        by_point = _job(folder, "point", tmp_path)
    tasks = by_point.tasks()
    assert len(set(tasks.values())) == 2 and all(tasks.values())
    warning = next(r.getMessage() for r in caplog.records if "replay 1 task" in r.getMessage())
    assert "stats.cluster_by=task" in warning
    assert by_point.inputs is not None and by_point.inputs.warnings == [warning]
    by_task = _job(folder, "task", tmp_path)
    assert by_task.inputs is not None and by_task.inputs.warnings == []
    assert by_task.cluster_count() == 2 < by_point.cluster_count()
    point_ci, task_ci = (r.estimates()[names.OVERALL] for r in (by_point, by_task))
    assert task_ci.clusters == 2
    assert task_ci.high - task_ci.low > point_ci.high - point_ci.low
    assert {row["task"] for row in by_task.rows()} == set(tasks.values())
    text = scorecard.render(by_task, Console(width=400, file=io.StringIO()))
    assert "clusters are tasks" in text and "stats.cluster_by=task" in text
    text = scorecard.render(by_point, Console(width=400, file=io.StringIO()))
    assert "clusters are (transcript, point)" in text and warning in text


def test_cluster_by_is_validated_and_logged_as_a_param():
    with pytest.raises(UserError, match="stats.cluster_by"):
        validate(compose_config(["stats.cluster_by=episode"]), parts=False)
    from benchmark.run.run_record import flatten

    assert flatten({"stats": {"cluster_by": "task"}})["stats.cluster_by"] == "task"


def test_real_swe_agent_runs_of_one_issue_share_a_task(shared_data):
    folder = shared_data / "swe-agent"
    tasks = {p.stem: import_file(p).task for p in sorted(folder.glob("*.traj"))}
    assert tasks["6e44b9__sweagenttestrepo-1c2844"] == tasks["swe-agent__test-repo-i1"]
    assert tasks["pydicom__pydicom-1458"] != tasks["swe-agent__test-repo-i1"]
    assert swe_agent_job(folder)  # the README's job over them sees the same files
