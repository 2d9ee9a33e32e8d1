"""The agent, the customer and the environment taking turns, from any point of a session.

One loop serves both uses: generating a session (from its first turn, nothing
compacted) and resuming one at a compaction point (from the compacted history,
the environment rebuilt by replaying the session's tool calls up to the point).
The agent sees ``context`` (compacted or not) plus what happens after; the
customer sees the whole conversation from its side; the evaluator sees the whole
trajectory. The environment's rebuild runs off the event loop, and so do tool calls
unless they are cheap (a copy-on-write environment).

Turns go as tau2's orchestrator routes them: the agent's tool call to the environment
and its result back to the agent; a customer with tools of its own (telecom) may call
them instead of speaking, the call runs as the user's and its result goes back to the
customer, who then speaks or calls again. The agent never sees the customer's calls.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from benchmark.task_success import cow, tau2_env
from benchmark.task_success.roles import Role, Step, user_view
from benchmark.task_success.session import STOP, Call, Turn, chat_message, seen_by_agent
from benchmark.transcript.models import Message


@dataclass
class Conversation:
    """A conversation in progress: the full trajectory, the agent's view of it, the counts."""

    domain: str
    task: Any  # tau2 Task
    env: Any  # tau2 Environment, at the state ``turns`` left it in
    turns: list[Turn]
    context: list[Message]
    start: int = 0  # turns before this were given (the point); the rest are new
    steps: int = 0
    tokens: int = 0
    ended: bool = False
    repeated_calls: int = 0
    calls: list[Call] = field(default_factory=list)
    # A copy-on-write environment's tool call copies a record or two (~0.2 ms): it runs
    # on the loop, where a hop to a thread would cost more (GIL handoffs, a wake-up each).
    inline_calls: bool = False

    def __post_init__(self) -> None:
        self.inline_calls = cow.is_view(self.env)
        self.calls = [c for t in self.turns for c in t.calls]
        self.ended = any(t.role != "tool" and STOP in (t.content or "") for t in self.turns)

    @property
    def user_has_tools(self) -> bool:
        """The customer has tools of its own in this environment (telecom's phone)."""
        return getattr(self.env, "user_tools", None) is not None

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)
        if seen_by_agent(turn):
            self.context.append(Message.model_validate(chat_message(turn)))

    def user_view(self) -> list[tuple[str, str]]:
        """What the customer has seen: the agent's and its own words, and its own tools'
        traffic; never the agent's."""
        return user_view(self.turns, self.user_has_tools)

    async def call(self, step: Step, requestor: str) -> None:
        """``step``'s tool call, by the agent or the customer, and its result, as two turns."""
        call = Call(
            id=f"call_{len(self.turns)}",
            name=step.name,
            arguments=step.arguments or {},
            requestor="user" if requestor == "user" else "assistant",
        )
        self.repeated_calls += any(call.same_as(c) for c in self.calls)
        self.calls.append(call)
        self.add(Turn(role=call.requestor, calls=[call]))
        run = tau2_env.user_call if call.requestor == "user" else tau2_env.call
        if self.inline_calls:
            text, error = run(self.env, call.id, call.name, call.arguments)
        else:
            text, error = await asyncio.to_thread(run, self.env, call.id, call.name, call.arguments)
        self.add(
            Turn(role="tool", content=text, call_id=call.id, requestor=call.requestor, error=error)
        )


def whose_turn(turns: list[Turn]) -> str:
    """``user`` opens a conversation, answers the agent's messages and reads its own tools'
    results; otherwise the agent."""
    if not turns:
        return "user"
    last = turns[-1]
    if last.role == "tool":
        return "user" if last.requestor == "user" else "agent"
    return "user" if last.role == "assistant" and not last.calls else "agent"


async def converse(
    conv: Conversation,
    agent: Role,
    user: Role,
    agent_system: str,
    user_system: str,
    max_steps: int,
) -> None:
    """Take turns until someone says STOP or ``max_steps`` turns (agent and customer) pass."""
    turn = whose_turn(conv.turns)
    while not conv.ended and conv.steps < max_steps:
        conv.steps += 1
        if turn == "user":
            if conv.user_has_tools:
                step = await user.user_act(user_system, conv.user_view())
                conv.tokens += step.tokens
                if step.action == "tool":  # its result is the customer's to read: its turn
                    await conv.call(step, "user")
                    continue
                text = step.message
            else:
                text, tokens = await user.say(user_system, conv.user_view())
                conv.tokens += tokens
            conv.add(Turn(role="user", content=text))
            conv.ended = STOP in text
            turn = "agent"
            continue
        step = await agent.act(agent_system, conv.context)
        conv.tokens += step.tokens
        if step.action == "reply":
            conv.add(Turn(role="assistant", content=step.message))
            conv.ended = STOP in step.message
            turn = "user"
            continue
        await conv.call(step, "assistant")
