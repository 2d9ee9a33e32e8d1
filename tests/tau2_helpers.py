"""Shared by the task-success tests: the scripted loopback stub as agent and customer, and
sessions made with it on real tau2 environments (skipped where tau2 is not installed)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest

from benchmark.llm import Endpoint, UsageLedger
from benchmark.llm.loop import run
from benchmark.stub.server import OpenAIStub

tau2 = pytest.importorskip(
    "tau2", reason="the 'tau2' extra is not installed (pip install -e '.[tau2]')"
)

from benchmark.task_success import tau2_env  # noqa: E402
from benchmark.task_success.conversation import Conversation, converse  # noqa: E402
from benchmark.task_success.roles import Role  # noqa: E402
from benchmark.task_success.runs import Players, systems  # noqa: E402
from benchmark.task_success.scripted import ScriptedTau2  # noqa: E402
from benchmark.task_success.session import Session, Turn  # noqa: E402


@contextlib.contextmanager
def scripted_players(hook: ScriptedTau2 | None = None, latency: float = 0.0) -> Iterator[Players]:
    """Agent and customer played by the scripted stub (``hook``; default: context mode)."""
    stub = OpenAIStub(latency=latency, record=False)
    stub.reply = hook or ScriptedTau2()
    stub.start()
    try:
        ledger = UsageLedger()

        def endpoint(name: str) -> Endpoint:
            return Endpoint(
                name=name,
                model="scripted",
                base_url=stub.base_url,
                api_key_env=None,
                max_concurrency=64,
                max_retries=0,
            )

        yield Players(
            Role(endpoint("agent"), "agent", ledger, None),
            Role(endpoint("user"), "user", ledger, None),
        )
    finally:
        from benchmark.llm import close_all

        close_all()
        stub.stop()


def live_session(ref: str, players: Players, max_steps: int = 60) -> tuple[Session, str | None]:
    """A session of task ``ref`` run live, and its environment's database hash at the end."""
    domain, _, task_id = ref.partition("/")
    task = tau2_env.task(domain, task_id)

    async def go() -> Conversation:
        env = await asyncio.to_thread(tau2_env.replay, domain, task, [])
        conv = Conversation(domain, task, env, [], [])
        await converse(conv, players.agent, players.user, *systems(domain, task), max_steps)
        return conv

    conv = run(go())
    from benchmark.task_success.session import tau2_messages

    value = tau2_env.reward(domain, task, tau2_messages(conv.turns), conv.env, conv.ended)
    session = Session(
        domain=domain, task_id=task_id, turns=conv.turns, reward=value, ended=conv.ended
    )
    return session, conv.env.get_db_hash()


def resume_points(turns: list[Turn]) -> list[int]:
    """Where a compaction point can fall: after a tool result or a customer message."""
    return [i + 1 for i, t in enumerate(turns[:-1]) if t.role in ("tool", "user") and i > 0]
