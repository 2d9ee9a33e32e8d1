"""Sessions made by running the agent with no compaction, and resumes at a point.

Both are coroutines on the shared LLM loop (:mod:`benchmark.llm.loop`); the
environment's rebuild and the evaluator run in threads (tool calls too, unless the
environment is a cheap copy-on-write one: :mod:`benchmark.task_success.cow`).
A generated session is cached by content (the task, both endpoints, the step cap,
the seed and the prompts' version) under ``cache.dir``: a rerun makes no call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Coroutine
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from benchmark.llm.client import LLMError
from benchmark.task_success import tau2_env
from benchmark.task_success.conversation import Conversation, converse
from benchmark.task_success.roles import Role, agent_system, scenario_text, user_system
from benchmark.task_success.session import (
    Session,
    Turn,
    chat_message,
    seen_by_agent,
    tau2_messages,
)
from benchmark.transcript.models import Message

T = TypeVar("T")
PROMPTS_VERSION = 1  # bump when a prompt changes: cached sessions are then made again


@dataclass(frozen=True)
class Players:
    """The agent and the customer, as the job built them."""

    agent: Role
    user: Role


@cache
def _agent_system(domain: str) -> str:
    return agent_system(domain, tau2_env.policy(domain), tau2_env.tool_schemas(domain))


def systems(domain: str, task: Any) -> tuple[str, str]:
    """The agent's and the customer's system prompts for ``task`` (the agent's, the same
    for a whole domain, is built once: every resume asks for it on the LLM loop)."""
    tools = tau2_env.user_tool_schemas(domain)  # telecom's customer has a phone to use
    return _agent_system(domain), user_system(
        domain, f"{domain}/{task.id}", scenario_text(task), tools
    )


def _replayed(domain: str, task: Any, turns: list[Turn]) -> Any:
    """The environment after ``turns`` (converted here, in the caller's thread)."""
    return tau2_env.replay(domain, task, tau2_messages(turns))


def _scored(domain: str, task: Any, turns: list[Turn], env: Any, ended: bool) -> float:
    """tau2's reward of ``turns`` (converted here, in the caller's thread)."""
    return tau2_env.reward(domain, task, tau2_messages(turns), env, ended)


def session_key(domain: str, task: Any, players: Players, max_steps: int, seed: int) -> str:
    """What a generated session depends on, hashed (the endpoints' model, server and
    sampling, never their keys)."""
    ends = [
        {
            k: getattr(r.client.endpoint, k)
            for k in ("model", "base_url", "temperature", "max_tokens")
        }
        for r in (players.agent, players.user)
    ]
    payload = [PROMPTS_VERSION, domain, task.model_dump(mode="json"), ends, max_steps, seed]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


async def generate(
    domain: str,
    task: Any,
    players: Players,
    max_steps: int,
    seed: int = 0,
    cache_dir: Path | None = None,
) -> Session:
    """One session of ``task``: agent and customer from the first turn, nothing compacted,
    scored by tau2's evaluator. Read from ``cache_dir`` when it was made before."""
    key = session_key(domain, task, players, max_steps, seed)
    cached = cache_dir / f"{key}.json" if cache_dir is not None else None
    if cached is not None and cached.is_file():
        try:
            return Session.model_validate_json(cached.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a damaged entry is made again
    env = await asyncio.to_thread(tau2_env.replay, domain, task, [])
    conv = Conversation(domain, task, env, [], [])
    await converse(conv, players.agent, players.user, *systems(domain, task), max_steps)
    value = await asyncio.to_thread(_scored, domain, task, list(conv.turns), env, conv.ended)
    session = Session(
        domain=domain, task_id=task.id, turns=conv.turns, reward=value, ended=conv.ended
    )
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(".tmp")
        temporary.write_text(session.model_dump_json(), encoding="utf-8")
        temporary.replace(cached)
    return session


class ResumeResult(BaseModel):
    """How one resume went: the task's reward and what it took after the point."""

    reward: float | None = Field(None, description="tau2's reward; None when the resume failed")
    steps: int = Field(0, description="turns after the point (agent and customer)")
    tokens: int = Field(0, description="agent and customer tokens (prompt + reply) after it")
    repeated_tool_calls: int = Field(
        0, description="calls after the point repeating an earlier call (same tool, arguments)"
    )
    ended: bool = Field(False, description="the conversation ended before the step cap")
    error: str | None = None

    @property
    def success(self) -> bool:
        return self.reward is not None and self.reward >= 1.0 - 1e-9


def uncompacted(turns: list[Turn]) -> list[Message]:
    """The session's turns as the agent's history, nothing removed (the control arm): the
    turns tau2 shows the agent (not a customer's own tool calls and their results)."""
    return [Message.model_validate(chat_message(t)) for t in turns if seen_by_agent(t)]


async def longest_first(jobs: list[tuple[int, Coroutine[Any, Any, T]]], limit: int) -> list[T]:
    """Run ``jobs`` (expected turns, coroutine), ``limit`` at once, the longest expected
    first; results in ``jobs``' order.

    Resumes differ in length (the turns left after their point): started in the order
    given, the long ones that start last leave the other slots idle at the end (with
    3 tasks of 2 to 7 calls, 256 resumes and 64 in flight, the end alone cost ~20% of the
    ideal rate); longest first, a classic makespan rule, leaves only short ones to end.
    """
    slots = asyncio.Semaphore(limit)

    async def one(job: Coroutine[Any, Any, T]) -> T:
        async with slots:
            return await job

    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][0])  # stable: ties keep order
    done = await asyncio.gather(*(one(jobs[i][1]) for i in order))  # tasks queue in this order
    results: list[Any] = [None] * len(jobs)
    for i, value in zip(order, done, strict=True):
        results[i] = value
    return results


def turns_left(session: Session, end: int) -> int:
    """How long a resume at ``end`` is expected to run: the session's turns after it."""
    return len(session.turns) - end


async def resume(
    session: Session,
    task: Any,
    end: int,
    context: list[Message],
    players: Players,
    max_steps: int,
) -> ResumeResult:
    """Resume ``session`` after its first ``end`` turns with the agent's history ``context``
    (compacted, or :func:`uncompacted` for the control), to the end or ``max_steps``.
    ``end`` counts the session's turns (a point's: ``Session.turn_end``); the environment
    is rebuilt by replaying both sides' tool calls before it."""
    domain = session.domain
    given = list(session.turns[:end])
    try:
        env = await asyncio.to_thread(_replayed, domain, task, given)
    except ValueError as exc:  # the log's tool results do not replay: not this task's state
        return ResumeResult(error=f"replay failed: {str(exc).splitlines()[0][:200]}")
    conv = Conversation(domain, task, env, given, list(context), start=end)
    try:
        await converse(conv, players.agent, players.user, *systems(domain, task), max_steps)
    except LLMError as exc:
        return ResumeResult(steps=conv.steps, tokens=conv.tokens, error=str(exc)[:300])
    value = await asyncio.to_thread(_scored, domain, task, list(conv.turns), env, conv.ended)
    return ResumeResult(
        reward=value,
        steps=conv.steps,
        tokens=conv.tokens,
        repeated_tool_calls=conv.repeated_calls,
        ended=conv.ended,
    )
