"""A tau2 session's environment rebuilt by replaying its tool calls, on real tau2 domains:
the same database as the live run's end, a log imported from tau2's results.json format, and
the arm's reward equal to tau2's own evaluators."""

from __future__ import annotations

import json

import pytest
from tau2_helpers import live_session, scripted_players

from benchmark.errors import UserError
from benchmark.task_success import tau2_env
from benchmark.task_success.session import import_results, tau2_messages

TASKS = ["retail/11", "retail/2", "mock/create_task_1"]


@pytest.fixture(scope="module")
def sessions():
    with scripted_players() as players:
        yield {ref: live_session(ref, players) for ref in TASKS}


def results_file(path, session, task) -> None:
    """``session`` written as tau2's ``tau2 run`` writes results.json (its own models)."""
    messages = [m.model_dump(mode="json") for m in tau2_messages(session.turns)]
    data = {
        "info": {"environment_info": {"domain_name": session.domain}},
        "tasks": [task.model_dump(mode="json")],
        "simulations": [
            {
                "id": "sim-0",
                "task_id": session.task_id,
                "messages": messages,
                "reward_info": {"reward": session.reward},
                "termination_reason": "user_stop",
            }
        ],
    }
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("ref", TASKS)
def test_replaying_a_logged_session_gives_the_live_database(ref, sessions, tmp_path):
    session, live_hash = sessions[ref]
    task = tau2_env.task(session.domain, session.task_id)
    log = tmp_path / "results.json"
    results_file(log, session, task)
    [(imported, logged_task)] = import_results(log)
    assert imported.turns == session.turns and imported.reward == session.reward
    assert logged_task is not None and logged_task["id"] == session.task_id
    env = tau2_env.replay(imported.domain, task, tau2_messages(imported.turns))
    assert env.get_db_hash() == live_hash
    if any(t.calls for t in session.turns):  # some write or read happened: state is not the start
        assert len(session.turns) > 2


@pytest.mark.parametrize("ref", TASKS)
def test_reward_matches_tau2s_own_evaluators(ref, sessions):
    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    session, _ = sessions[ref]
    task = tau2_env.task(session.domain, session.task_id)
    trajectory = tau2_messages(session.turns)
    env = tau2_env.replay(session.domain, task, trajectory)
    basis = {b.value for b in task.evaluation_criteria.reward_basis}
    expected = 1.0
    if basis & {"DB", "ENV_ASSERTION"}:
        expected *= EnvironmentEvaluator.calculate_reward(
            environment_constructor=lambda solo_mode=False: tau2_env.environment(session.domain),
            task=task,
            full_trajectory=trajectory,
        ).reward
    if "ACTION" in basis:
        expected *= ActionEvaluator.calculate_reward(task=task, full_trajectory=trajectory).reward
    if "COMMUNICATE" in basis:
        expected *= CommunicateEvaluator.calculate_reward(
            task=task, full_trajectory=trajectory
        ).reward
    assert tau2_env.reward(session.domain, task, trajectory, env, True) == expected
    assert session.reward == expected
    assert tau2_env.reward(session.domain, task, trajectory, env, ended=False) == 0.0


def test_a_log_whose_results_do_not_replay_is_refused(sessions):
    session, _ = sessions["retail/11"]
    task = tau2_env.task(session.domain, session.task_id)
    turns = list(session.turns)
    index = next(i for i, t in enumerate(turns) if t.role == "tool")
    turns[index] = turns[index].model_copy(update={"content": '{"forged": true}'})
    with pytest.raises(ValueError):
        tau2_env.replay(session.domain, task, tau2_messages(turns))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json", "not a tau2 results file"),
        ('{"info": {}}', "not a tau2 results file"),
        (
            '{"info": {"environment_info": {"domain_name": "airline"}}, "simulations": []}',
            "no simulation",
        ),
        ("[1, 2]", "not a tau2 results file"),
    ],
)
def test_a_file_that_is_no_tau2_log_is_one_user_error(text, expected, tmp_path):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        import_results(path)
    assert expected in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_task_and_domain_are_user_errors():
    with pytest.raises(UserError, match="airline has no task 'nope'"):
        tau2_env.task("airline", "nope")
    with pytest.raises(UserError, match="task domain 'space' is not supported"):
        tau2_env.task("space", "1")
