"""The fast environment path (copy-on-write over one frozen database, record-wise DB
check) against the straightforward one (a deep copy per environment, tau2's whole-DB
hash): the same databases, the same DB hashes and the same rewards, on real tau2 tasks
and trajectories that succeed, stop half-way and go wrong; and the shared database is
never changed by any way a tool can reach a record."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from tau2_helpers import live_session, resume_points, scripted_players

from benchmark.task_success import cow, tau2_env
from benchmark.task_success.session import tau2_messages

# The mock tasks start from initialization data, initialization actions, a tool call in
# their history, and check env assertions (one with nothing else).
GOLD_TASKS = [
    "retail/11",
    "retail/33",
    "airline/14",
    "mock/create_task_1",
    "mock/update_task_with_initialization_data",
    "mock/update_task_with_initialization_actions",
    "mock/update_task_with_history_and_env_assertions",
    "mock/impossible_task_1",
]

SUCCEED_THEN_FAIL = GOLD_TASKS[:6]  # all gold actions: 1.0; all but the last: 0.0


def _task(ref: str):
    domain, _, task_id = ref.partition("/")
    return domain, tau2_env.task(domain, task_id)


def gold_trajectory(domain: str, task, keep: int | None = None, spoil: bool = False) -> list:
    """The task's gold actions as an agent's tool calls with the results a straightforward
    environment gives them (first ``keep`` of them; ``spoil``: the last one's arguments
    changed), ending on an agent message."""
    from tau2.data_model.message import AssistantMessage, ToolCall

    actions = [a for a in task.evaluation_criteria.actions or [] if a.requestor == "assistant"]
    actions = actions[:keep] if keep is not None else actions
    env = tau2_env.replay(domain, task, [], shared=False)
    messages: list = []
    for n, action in enumerate(actions):
        arguments = dict(action.arguments)
        if spoil and n == len(actions) - 1 and arguments:
            first = next(iter(arguments))
            arguments[first] = "spoiled"
        call = ToolCall(id=f"c{n}", name=action.name, arguments=arguments, requestor="assistant")
        messages.append(AssistantMessage(role="assistant", tool_calls=[call]))
        messages.append(env.get_response(call))
    told = " ".join(task.evaluation_criteria.communicate_info or [])
    messages.append(AssistantMessage(role="assistant", content=f"Done. {told}"))
    return messages


def both(domain: str, task, trajectory: list):
    fast = tau2_env.replay(domain, task, trajectory)
    plain = tau2_env.replay(domain, task, trajectory, shared=False)
    return fast, plain


def frozen_hash(domain: str, task) -> str:
    from tau2.utils.utils import get_dict_hash

    template, tables = tau2_env._frozen(domain, tau2_env._init_key(task))
    return get_dict_hash(type(template).model_construct(**tables).model_dump())


@pytest.mark.parametrize("ref", GOLD_TASKS)
def test_fast_path_gives_the_straightforward_hashes_and_rewards(ref):
    domain, task = _task(ref)
    before = frozen_hash(domain, task)
    n = len(task.evaluation_criteria.actions or [])
    rewards = {}
    for keep, spoil in [(None, False), (max(n - 1, 0), False), (n, True)]:
        trajectory = gold_trajectory(domain, task, keep, spoil)
        fast, plain = both(domain, task, trajectory)
        assert cow.is_view(fast) and not cow.is_view(plain)
        assert fast.get_db_hash() == plain.get_db_hash(), (ref, keep, spoil)
        assert fast.get_user_db_hash() == plain.get_user_db_hash()
        got = tau2_env.reward(domain, task, trajectory, fast, True)
        assert got == tau2_env.reward(domain, task, trajectory, plain, True), (ref, keep, spoil)
        rewards[keep, spoil] = got
    assert frozen_hash(domain, task) == before  # the shared database is as it was
    if ref in SUCCEED_THEN_FAIL:  # both outcomes are covered, not only agreement
        assert rewards[None, False] == 1.0 and rewards[n - 1, False] == 0.0


def test_live_sessions_and_their_points_replay_alike():
    with scripted_players() as players:
        sessions = [live_session(ref, players)[0] for ref in ("retail/11", "mock/create_task_1")]
    for session in sessions:
        task = tau2_env.task(session.domain, session.task_id)
        for end in [*resume_points(session.turns), len(session.turns)]:
            given = tau2_messages(session.turns[:end])
            fast, plain = both(session.domain, task, given)
            assert fast.get_db_hash() == plain.get_db_hash(), (session.task_id, end)
            assert tau2_env.reward(session.domain, task, given, fast, True) == tau2_env.reward(
                session.domain, task, given, plain, True
            )


def test_a_record_changed_in_place_or_added_or_removed_is_a_different_db():
    domain, task = _task("retail/11")
    a, b = tau2_env.replay(domain, task, []), tau2_env.replay(domain, task, [])
    assert cow.same_db(a.tools.db, b.tools.db)
    order = next(iter(dict.keys(a.tools.db.orders)))
    a.tools.db.orders[order].status = "cancelled"  # changed in place, through the table
    assert not cow.same_db(a.tools.db, b.tools.db)
    b.tools.db.orders[order].status = "cancelled"
    assert cow.same_db(a.tools.db, b.tools.db)  # alike again, though both hold copies
    del b.tools.db.orders[order]
    assert not cow.same_db(a.tools.db, b.tools.db)
    c, d = tau2_env.replay(domain, task, []), tau2_env.replay(domain, task, [])
    user = next(iter(dict.keys(c.tools.db.users)))
    d.tools.db.users[user].orders.append("#W0")  # a nested list, changed in place
    assert not cow.same_db(c.tools.db, d.tools.db)
    assert c.get_db_hash() != d.get_db_hash()


def test_an_int_turned_float_differs_as_the_hash_does():
    # 100 == 100.0 in Python, but not in the JSON tau2 hashes: the check goes by the JSON.
    domain, task = _task("airline/14")
    a, b = tau2_env.replay(domain, task, []), tau2_env.replay(domain, task, [])
    found = next(
        (user, key)
        for user, record in dict.items(a.tools.db.users)
        for key, method in record.payment_methods.items()
        if isinstance(getattr(method, "amount", None), (int, float))
    )
    user, key = found
    method = a.tools.db.users[user].payment_methods[key]
    method.amount = int(method.amount)  # stored as set: no validation on assignment
    twin = b.tools.db.users[user].payment_methods[key]
    twin.amount = float(twin.amount)
    assert method.amount == twin.amount
    assert a.get_db_hash() != b.get_db_hash()
    assert not cow.same_db(a.tools.db, b.tools.db)


class Record:
    """A record with a nested list, as tau2's have."""

    def __init__(self) -> None:
        self.items = [1]


def test_no_way_of_reaching_a_record_changes_the_shared_one():
    base = {"a": Record(), "b": Record(), "c": Record()}
    mode = cow.Mode()
    reaches = [
        lambda t: t["a"],
        lambda t: t.get("a"),
        lambda t: t.values()[0],
        lambda t: t.items()[0][1],
        lambda t: t.pop("a"),
        lambda t: t.setdefault("a"),
        lambda t: dict(t)["a"],
        lambda t: {**t}["a"],
        lambda t: t.copy()["a"],
        lambda t: (t | {})["a"],
        lambda t: copy.deepcopy(t)["a"],
        lambda t: pickle.loads(pickle.dumps(t))["a"],
        lambda t: [v for k, v in t.items() if k == "a"][0],
        lambda t: t.popitem()[1] if list(t)[-1] == "a" else t["a"],
    ]
    for reach in reaches:
        table = cow.CowTable(base, mode)
        record = reach(table)
        record.items.append(2)
        assert base["a"].items == [1]
    table = cow.CowTable(base, mode)
    mode.read = True  # inside a read tool: the shared record itself, no copy
    assert table["a"] is base["a"]
    mode.read = False
    assert table["b"] is not base["b"] and table["b"] is table["b"]  # copied once, then kept


def test_telecom_keeps_the_straightforward_copy():
    domain, task = "telecom", next(iter(tau2_env.tasks("telecom").values()))
    env = tau2_env.replay(domain, task, [])
    assert not cow.is_view(env)
    assert json.loads(json.dumps(env.get_db_hash()))


def test_a_frozen_replay_serves_later_ones_and_each_gets_its_own_copy():
    domain, task = _task("retail/11")
    trajectory = gold_trajectory(domain, task, keep=4)  # reads; a return comes next
    tau2_env.REPLAYS.clear()
    first = tau2_env.replay(domain, task, trajectory)
    assert len(tau2_env.REPLAYS._kept) == 1
    reworded = [
        m.model_copy(update={"content": "other words"})
        if m.role == "assistant" and m.content
        else m
        for m in trajectory
    ]
    second = tau2_env.replay(domain, task, reworded)
    assert len(tau2_env.REPLAYS._kept) == 1  # the words do not matter to the state
    assert first.get_db_hash() == second.get_db_hash()
    action = task.evaluation_criteria.actions[4]
    first.make_tool_call(action.name, requestor="assistant", **action.arguments)
    assert first.get_db_hash() != second.get_db_hash()  # a write stays in its environment
    third = tau2_env.replay(domain, task, trajectory)
    assert third.get_db_hash() == second.get_db_hash()
    forged = list(trajectory)
    index = next(i for i, m in enumerate(forged) if m.role == "tool")
    forged[index] = forged[index].model_copy(update={"content": '{"forged": true}'})
    with pytest.raises(ValueError):  # a replay that was checked once is not a pass for others
        tau2_env.replay(domain, task, forged)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("get_user_details", {"user_id": "yusuf_rossi_9620"}),
        ("get_user_details", {"user_id": "nobody"}),  # the tool raises: an error reply
        ("find_user_id_by_email", {"email": "yusuf.rossi7301@example.com"}),
        ("list_all_product_types", {}),
        ("calculate", {"expression": "2 * (3 + 4)"}),
        ("get_order_details", {}),  # a missing argument
        ("no_such_tool", {}),
    ],
)
def test_a_live_tool_call_answers_as_taus_get_response(name, arguments):
    from tau2.data_model.message import ToolCall

    domain, task = _task("retail/11")
    env, twin = tau2_env.replay(domain, task, []), tau2_env.replay(domain, task, [], shared=False)
    text, error = tau2_env.call(env, "c1", name, arguments)
    reply = twin.get_response(ToolCall(id="c1", name=name, arguments=arguments))
    assert (text, error) == (reply.content, reply.error)


def test_resumes_start_longest_expected_first_and_answer_in_order():
    import asyncio

    from benchmark.llm.loop import run
    from benchmark.task_success.runs import longest_first

    started: list[str] = []
    running = [0, 0]  # now, most at once

    async def job(name: str) -> str:
        started.append(name)
        running[0] += 1
        running[1] = max(running)
        await asyncio.sleep(0.01)
        running[0] -= 1
        return name.upper()

    names = [("a", 2), ("b", 7), ("c", 2), ("d", 5), ("e", 7)]
    got = run(longest_first([(n, job(name)) for name, n in names], limit=2))
    assert got == ["A", "B", "C", "D", "E"]  # in the order given
    assert started == ["b", "e", "d", "a", "c"]  # longest first, ties as given
    assert running[1] == 2
