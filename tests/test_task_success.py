"""The task-success arm on real tau2 environments with the scripted loopback stub (NOT a
measurement: it only shows the arm scores what it should): a control resume that repeats the
log scores the log's reward, a truncated history scores lower on a planted case, and a job
logs the task metrics and the per-point table to a real MLflow store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import compose_config
from tau2_helpers import live_session, resume_points, scripted_players

from benchmark.errors import UserError
from benchmark.llm.loop import run
from benchmark.policy.truncate import Truncate
from benchmark.run.compaction import CompactionPoint, segments
from benchmark.task_success import tau2_env
from benchmark.task_success.roles import action_text
from benchmark.task_success.runs import resume, uncompacted
from benchmark.task_success.scripted import ScriptedTau2
from benchmark.transcript.models import Transcript


@pytest.fixture(scope="module")
def sessions():
    with scripted_players() as players:
        return {ref: live_session(ref, players)[0] for ref in ("retail/11", "retail/2")}


def repeat_hook(session) -> ScriptedTau2:
    """The stub agent repeating ``session``'s agent turns, keyed by its first customer words."""
    context = uncompacted(session.turns)
    turns = [action_text(m) for m in context if m.role == "assistant"]
    return ScriptedTau2(mode="repeat", logged={context[0].content: turns})


@pytest.mark.parametrize("ref", ["retail/11", "retail/2"])
def test_control_resume_repeating_the_log_scores_the_logged_reward(ref, sessions):
    session = sessions[ref]
    task = tau2_env.task(session.domain, session.task_id)
    points = resume_points(session.turns)
    assert session.reward in (0.0, 1.0) and points
    with scripted_players(repeat_hook(session)) as players:
        for end in (points[0], points[len(points) // 2], points[-1]):
            got = run(resume(session, task, end, uncompacted(session.turns[:end]), players, 40))
            assert got.error is None and got.ended
            assert got.reward == session.reward, (ref, end)
            assert got.repeated_tool_calls == 0  # it repeats the log, not its own calls


def test_truncated_history_scores_lower_on_a_planted_case(sessions):
    # Planted: the customer's name and zip (asked once) and the order's details sit in the
    # region truncate drops; the next gold action needs ids only they stated.
    session = sessions["retail/11"]
    assert session.reward == 1.0
    task = tau2_env.task(session.domain, session.task_id)
    transcript = Transcript(id=session.id, source="tau2", messages=uncompacted(session.turns))
    end = [i + 1 for i, t in enumerate(session.turns) if t.role == "tool"][2]  # after 3 calls
    point = CompactionPoint(
        transcript_id=session.id,
        ordinal=0,
        head_end=1,
        tail_start=end - 2,
        end=end,
        tokens_before=sum(m.tokens for m in transcript.messages[:end]),
    )
    truncated = Truncate(recent_tokens=200).compact(segments(transcript, point))
    assert len(truncated) < end
    with scripted_players() as players:
        control = run(resume(session, task, end, uncompacted(session.turns[:end]), players, 30))
        compacted = run(resume(session, task, end, truncated, players, 30))
    assert control.reward == 1.0 and control.error is None
    assert compacted.error is None and compacted.ended
    assert compacted.reward < control.reward


def test_job_logs_task_metrics_and_points_table(tmp_path, mlflow_store, monkeypatch, capsys):
    from benchmark.__main__ import run as run_main

    monkeypatch.chdir(tmp_path)
    config = compose_config(
        [
            "+experiment=task_success",
            "task.tasks=[retail/11,retail/20]",
            f"cache.dir={tmp_path / 'c'}",
        ]
    )
    run_main(config)
    out = capsys.readouterr().out
    assert "task success (truncate):" in out

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{mlflow_store / 'mlflow.db'}")
    [run_] = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    metrics = run_.data.metrics
    for name in (
        "task/success",
        "task/success_lower",
        "task/success_upper",
        "task/success_control",
        "task/retention",
        "task/steps_to_finish",
        "task/tokens_to_finish",
        "task/repeated_tool_calls",
    ):
        assert name in metrics, name
    assert metrics["task/success_control"] == 1.0
    assert metrics["task/success"] < metrics["task/success_control"]
    # a ratio of success rates is never negative: its interval stays at or above 0
    assert metrics.get("task/retention_lower", 0.0) >= 0.0
    path = client.download_artifacts(run_.info.run_id, "task_points_table.json", str(tmp_path))
    rows = json.loads(Path(path).read_text())
    assert rows and {r["task_id"] for r in rows} <= {"11", "20"}
    keys = {
        "transcript",
        "task_id",
        "domain",
        "point",
        "policy",
        "reward",
        "success",
        "reward_control",
        "success_control",
        "steps",
        "tokens",
        "repeated_tool_calls",
        "probe_overall",
        "probes",
        "facts_lost",
        "cluster",
    }
    assert all(keys <= set(r) for r in rows)
    assert all(r["policy"] == "truncate" and r["domain"] == "retail" for r in rows)


def test_cfg_job_shows_the_arm(monkeypatch, capsys):
    from benchmark.__main__ import main

    monkeypatch.setattr(
        sys, "argv", ["benchmark", "+experiment=task_success", "agent=gpt4o", "--cfg", "job"]
    )
    main()
    out = capsys.readouterr().out
    assert "task:" in out and "agent:" in out and "model: gpt-4o" in out and "user:" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["task.tasks=[space/1]"], "config key 'task.tasks'"),
        (["task.tasks=[]"], "config key 'task.tasks'"),
        (["task.max_steps=0"], "config key 'task.max_steps'"),
        (["task.tasks=[airline/nope]"], "airline has no task 'nope'"),
        (["task.tasks=[telecom/x]"], "telecom"),
        (["agent=nobody"], "unknown agent 'nobody'"),
    ],
)
def test_bad_task_options_are_one_line_and_exit_2(args, expected, tmp_path, monkeypatch, capsys):
    from benchmark.__main__ import main

    monkeypatch.chdir(tmp_path)
    argv = ["+experiment=task_success", "tracking=disabled", f"cache.dir={tmp_path}", *args]
    monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert exit_.value.code == 2, err
    assert len(lines) == 1 and expected in lines[0], err
    assert "Traceback" not in err


def test_missing_extra_is_one_line_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tau2.data_model.message", None)
    with pytest.raises(UserError, match=r"pip install -e '\.\[tau2\]'"):
        tau2_env.tau2_loaded()
