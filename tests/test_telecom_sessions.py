"""telecom sessions made and resumed on tau2's real environment with the scripted loopback stub
(NOT a measurement): the customer's own phone tools run as the user's, replay reproduces both
databases, a control resume repeating the log scores its reward, the agent never sees the
customer's calls (tau2's message model), and a job reports the task metrics for telecom."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import at_most, compose_config
from tau2_helpers import scripted_players

from benchmark.llm.loop import run
from benchmark.policy.truncate import Truncate
from benchmark.run.compaction import CompactionPoint, segments
from benchmark.task_success import tau2_env
from benchmark.task_success.conversation import Conversation, converse, whose_turn
from benchmark.task_success.roles import action_text
from benchmark.task_success.runs import Players, resume, systems, uncompacted
from benchmark.task_success.scripted import ScriptedTau2
from benchmark.task_success.session import (
    Call,
    Session,
    Turn,
    import_results,
    seen_by_agent,
    tau2_messages,
)
from benchmark.transcript.models import Transcript

CASE_S = 60


@pytest.fixture(autouse=True)
def _bounded():
    """A case that runs past CASE_S fails (SIGALRM), not the suite."""
    with at_most(CASE_S):
        yield


AIRPLANE = "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]"
NETWORK = "[mobile_data_issue]airplane_mode_on|bad_network_preference[PERSONA:Hard]"
TASKS = [AIRPLANE, NETWORK]


def live(task_id: str, players: Players) -> tuple[Session, str | None, str | None]:
    """A telecom session run live, and its environment's database and user-database hashes."""
    task = tau2_env.task("telecom", task_id)

    async def go() -> Conversation:
        env = await asyncio.to_thread(tau2_env.replay, "telecom", task, [])
        conv = Conversation("telecom", task, env, [], [])
        await converse(conv, players.agent, players.user, *systems("telecom", task), 60)
        return conv

    conv = run(go())
    value = tau2_env.reward("telecom", task, tau2_messages(conv.turns), conv.env, conv.ended)
    session = Session(
        domain="telecom", task_id=task_id, turns=conv.turns, reward=value, ended=conv.ended
    )
    return session, conv.env.get_db_hash(), conv.env.get_user_db_hash()


@pytest.fixture(scope="module")
def sessions():
    with scripted_players() as players:
        return {task_id: live(task_id, players) for task_id in TASKS}


def repeat_hook(session: Session) -> ScriptedTau2:
    """The stub agent repeating ``session``'s agent turns, keyed by the customer's opening."""
    context = uncompacted(session.turns)
    turns = [action_text(m) for m in context if m.role == "assistant"]
    return ScriptedTau2(mode="repeat", logged={context[0].content: turns})


def agent_points(session: Session) -> list[int]:
    """Where the pipeline may cut the agent's transcript: after a tool result or a customer
    message it sees (a point's ``end`` counts agent-visible turns)."""
    seen = [t for t in session.turns if seen_by_agent(t)]
    return [i + 1 for i, t in enumerate(seen[:-1]) if i > 0 and t.role in ("tool", "user")]


@pytest.mark.parametrize("task_id", TASKS)
def test_a_made_session_replays_to_both_live_databases(task_id, sessions, tmp_path):
    session, db_hash, user_db_hash = sessions[task_id]
    task = tau2_env.task("telecom", task_id)
    user_calls = [c for t in session.turns if t.role == "user" for c in t.calls]
    gold = [a for a in task.evaluation_criteria.actions if a.requestor == "user"]
    assert gold and {c.name for c in user_calls} == {a.name for a in gold}
    assert all(c.requestor == "user" for c in user_calls)
    results = [t for t in session.turns if t.role == "tool"]
    assert results and all(t.requestor == "user" and not t.error for t in results)
    assert session.reward == 1.0 and session.ended
    # Through tau2's own results.json format and back: the same turns, both hashes.
    log = tmp_path / "results.json"
    messages = [m.model_dump(mode="json") for m in tau2_messages(session.turns)]
    simulation = {"id": "s", "task_id": task_id, "messages": messages, "reward_info": None}
    info = {"environment_info": {"domain_name": "telecom"}}
    log.write_text(json.dumps({"info": info, "simulations": [simulation]}))
    [(imported, _)] = import_results(log)
    assert imported.turns == session.turns
    env = tau2_env.replay("telecom", task, tau2_messages(imported.turns))
    assert (env.get_db_hash(), env.get_user_db_hash()) == (db_hash, user_db_hash)
    start = tau2_env.replay("telecom", task, [])
    assert start.get_user_db_hash() != user_db_hash  # the phone did change


@pytest.mark.parametrize("task_id", TASKS)
def test_reward_is_tau2s_environment_evaluator(task_id, sessions):
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    session, _, _ = sessions[task_id]
    task = tau2_env.task("telecom", task_id)
    trajectory = tau2_messages(session.turns)
    expected = EnvironmentEvaluator.calculate_reward(
        environment_constructor=lambda solo_mode=False: tau2_env.environment("telecom"),
        task=task,
        full_trajectory=trajectory,
    ).reward
    env = tau2_env.replay("telecom", task, trajectory)
    assert tau2_env.reward("telecom", task, trajectory, env, True) == expected == 1.0
    # Without the customer's second device action the phone is not fixed: 0.
    cut = next(i for i, t in enumerate(session.turns) if t.role == "user" and t.calls)
    later = [i for i, t in enumerate(session.turns) if t.role == "user" and t.calls and i > cut]
    partial = tau2_messages(session.turns[: later[0]])
    env = tau2_env.replay("telecom", task, partial)
    assert tau2_env.reward("telecom", task, partial, env, True) == 0.0


def test_the_agent_never_sees_the_customers_own_calls(sessions):
    session, _, _ = sessions[AIRPLANE]
    chat = session.chat()["messages"]
    hidden = [t for t in session.turns if not seen_by_agent(t)]
    assert hidden and len(chat) == len(session.turns) - len(hidden)
    user_call_ids = {c.id for t in session.turns if t.role == "user" for c in t.calls}
    agent_call_ids = {c["id"] for m in chat for c in m.get("tool_calls") or []}
    assert not user_call_ids & agent_call_ids
    assert not any(m.get("tool_call_id") in user_call_ids for m in chat)
    assert all(m["role"] != "assistant" or not m.get("tool_calls") for m in chat)
    # What the customer said of its phone reaches the agent, as its words.
    assert any(m["role"] == "user" and "I did this on my device" in m["content"] for m in chat)
    # The uncompacted history the control resumes from is that same view.
    transcript = Transcript.model_validate({"id": "x", "source": "t", "messages": chat})
    assert [m.model_dump() for m in uncompacted(session.turns)] == [
        m.model_dump() for m in transcript.messages
    ]


def test_a_point_cuts_the_session_after_its_last_agent_visible_turn(sessions):
    session, _, _ = sessions[AIRPLANE]
    seen = [i for i, t in enumerate(session.turns) if seen_by_agent(t)]
    for n, index in enumerate(seen, start=1):
        assert session.turn_end(n) == index + 1
        assert seen_by_agent(session.turns[session.turn_end(n) - 1])
    assert session.turn_end(0) == 0 and session.turn_end(len(seen) + 5) == len(session.turns)
    # After its own tool's result it is the customer who speaks, after the agent's the agent.
    user_result = Turn(role="tool", content="ok", call_id="c", requestor="user")
    agent_result = Turn(role="tool", content="ok", call_id="c")
    assert whose_turn([user_result]) == "user" and whose_turn([agent_result]) == "agent"
    mine = Call(id="a", name="toggle_data", requestor="user")
    assert not mine.same_as(Call(id="b", name="toggle_data", requestor="assistant"))


@pytest.mark.parametrize("task_id", TASKS)
def test_control_resume_repeating_the_log_scores_its_reward(task_id, sessions):
    session, _, _ = sessions[task_id]
    task = tau2_env.task("telecom", task_id)
    points = agent_points(session)
    assert len(points) >= 2
    with scripted_players(repeat_hook(session)) as players:
        for seen in points:
            end = session.turn_end(seen)
            context = uncompacted(session.turns[:end])
            got = run(resume(session, task, end, context, players, 40))
            assert got.error is None and got.ended, (task_id, seen, got)
            assert got.reward == session.reward == 1.0, (task_id, seen)
            assert got.repeated_tool_calls == 0


def test_truncated_history_repeats_a_device_action_and_fails(sessions):
    # Planted: the customer's report that airplane mode is now off sits in the region truncate
    # drops; the context agent asks again, and the customer toggles it back on.
    session, _, _ = sessions[AIRPLANE]
    task = tau2_env.task("telecom", AIRPLANE)
    chat = session.chat()["messages"]
    transcript = Transcript.model_validate({"id": session.id, "source": "t", "messages": chat})
    reports = [i for i, m in enumerate(chat) if "I did this on my device" in m["content"]]
    seen = reports[0] + 2  # the report, then the agent's next request
    point = CompactionPoint(
        transcript_id=session.id,
        ordinal=0,
        head_end=1,
        tail_start=seen - 1,
        end=seen,
        tokens_before=sum(m.tokens for m in transcript.messages[:seen]),
    )
    truncated = Truncate(recent_tokens=10).compact(segments(transcript, point))
    assert not any("I did this on my device" in m.render() for m in truncated)
    end = session.turn_end(seen)
    with scripted_players() as players:
        control = run(resume(session, task, end, uncompacted(session.turns[:end]), players, 30))
        compacted = run(resume(session, task, end, truncated, players, 30))
    assert control.reward == 1.0 and control.repeated_tool_calls == 0
    assert compacted.error is None and compacted.ended
    assert compacted.reward == 0.0 and compacted.repeated_tool_calls >= 1


def test_job_on_telecom_tasks_logs_task_metrics(tmp_path, mlflow_store, monkeypatch, capsys):
    from benchmark.__main__ import run as run_main

    monkeypatch.chdir(tmp_path)
    config = compose_config(
        [
            "+experiment=task_success",
            "task=tau2_telecom",
            "compaction.context_window=400",
            "compaction.tail_tokens=60",
            f"cache.dir={tmp_path / 'c'}",
        ]
    )
    run_main(config)
    assert "task success (truncate):" in capsys.readouterr().out

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{mlflow_store / 'mlflow.db'}")
    [run_] = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    metrics = run_.data.metrics
    assert metrics["task/success_control"] == 1.0
    assert metrics["task/success"] < metrics["task/success_control"]
    assert metrics["task/repeated_tool_calls"] > 0
    path = client.download_artifacts(run_.info.run_id, "task_points_table.json", str(tmp_path))
    rows = json.loads(Path(path).read_text())
    assert rows and all(r["domain"] == "telecom" for r in rows)
    assert {r["task_id"] for r in rows} <= {t.partition("/")[2] for t in config.task.tasks}
    assert all(r["reward_control"] == 1.0 for r in rows)


def test_a_customers_failing_call_is_logged_as_an_error_and_replays(sessions):
    session, _, _ = sessions[AIRPLANE]
    task = tau2_env.task("telecom", AIRPLANE)
    env = tau2_env.replay("telecom", task, tau2_messages(session.turns))
    text, error = tau2_env.user_call(env, "bad_1", "no_such_tool", {})
    wrong, wrong_error = tau2_env.user_call(env, "bad_2", "set_network_mode_preference", {})
    assert error and wrong_error and text.startswith("Error") and wrong.startswith("Error")
    call = Call(id="bad_1", name="no_such_tool", requestor="user")
    turns = [
        *session.turns,
        Turn(role="user", calls=[call]),
        Turn(role="tool", content=text, call_id="bad_1", requestor="user", error=True),
    ]
    again = tau2_env.replay("telecom", task, tau2_messages(turns))
    assert again.get_user_db_hash() == env.get_user_db_hash()
    # The agent's tools are not the customer's: asked as the user, an agent tool fails.
    _, refused = tau2_env.user_call(env, "bad_3", "get_customer_by_phone", {"phone_number": "1"})
    assert refused
