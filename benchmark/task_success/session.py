"""A tau2 session: the agent, user and tool messages of one task, in order.

Sessions are made by running the agent with no compaction (``generate``) or
imported from tau2's own simulation logs (``results.json`` of ``tau2 run``,
:func:`import_results`). A session becomes a chat transcript file for the probe
pipeline, and tau2 messages for its environment and evaluators.

The transcript is the agent's history as tau2 keeps it (``is_valid_agent_history_message``):
its own turns, the customer's words and its own tools' results. A telecom customer's
calls on its phone and their results are the customer's (tau2 shows them to the user
simulator only), so they are not in it: a compaction point's ``end`` counts agent-visible
turns, and :meth:`Session.turn_end` gives the session turns it covers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchmark.errors import UserError
from benchmark.task_success.marks import STOP  # noqa: F401  (re-exported: sessions end on it)


class Call(BaseModel):
    """One tool call of the agent (or, in telecom logs, of the user)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["assistant", "user"] = "assistant"

    def same_as(self, other: Call) -> bool:
        """The same tool with the same arguments, by the same side (a repeat of it)."""
        return (
            self.name == other.name
            and self.requestor == other.requestor
            and _canon(self.arguments) == _canon(other.arguments)
        )


class Turn(BaseModel):
    """One message: an agent or user turn (text and/or tool calls), or a tool result."""

    model_config = ConfigDict(frozen=True)

    role: Literal["assistant", "user", "tool"]
    content: str | None = None
    calls: list[Call] = Field(default_factory=list)
    call_id: str | None = Field(None, description="a tool result: the call it answers")
    requestor: Literal["assistant", "user"] = "assistant"
    error: bool = False


class Session(BaseModel):
    """One task's conversation, with what its log says of the outcome."""

    model_config = ConfigDict(frozen=True)

    domain: str
    task_id: str
    turns: list[Turn]
    reward: float | None = Field(None, description="the log's reward (None: not scored)")
    ended: bool = Field(True, description="the conversation ended (not cut by a step cap)")
    source: str = Field("generated", description="'generated', or the log file it came from")

    @property
    def task_ref(self) -> str:
        return f"{self.domain}/{self.task_id}"

    @property
    def id(self) -> str:
        """The transcript id: readable, and unique by content."""
        digest = hashlib.sha256(
            json.dumps([t.model_dump() for t in self.turns], sort_keys=True).encode()
        ).hexdigest()[:10]
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.task_id)[:40]
        return f"tau2-{self.domain}-{safe}-{digest}"

    def chat(self) -> dict[str, Any]:
        """The session as the agent's OpenAI chat transcript, one message per agent-visible
        turn (:func:`seen_by_agent`)."""
        return {"messages": [chat_message(t) for t in self.turns if seen_by_agent(t)]}

    def turn_end(self, seen: int) -> int:
        """The session turns up to and including its ``seen``-th agent-visible turn: where a
        compaction point whose ``end`` is ``seen`` cuts the session (the customer's own tool
        traffic after that turn is after the point)."""
        if seen <= 0:
            return 0
        count = 0
        for index, turn in enumerate(self.turns):
            count += seen_by_agent(turn)
            if count == seen:
                return index + 1
        return len(self.turns)


def seen_by_agent(turn: Turn) -> bool:
    """In the agent's history, as tau2 keeps it: its own turns, the customer's words (not
    a customer turn calling its own tools), and results of its own tool calls."""
    if turn.role == "tool":
        return turn.requestor == "assistant"
    return turn.role == "assistant" or not turn.calls


def seen_by_user(turn: Turn) -> bool:
    """In the customer's history, as tau2 keeps it (``is_valid_user_history_message``): its
    own turns, the agent's words (not its tool calls), and results of its own tool calls."""
    if turn.role == "tool":
        return turn.requestor == "user"
    return turn.role == "user" or not turn.calls


def chat_message(turn: Turn) -> dict[str, Any]:
    """An agent-visible turn as an OpenAI chat message (tool calls with JSON-text arguments)."""
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.call_id, "content": turn.content or ""}
    message: dict[str, Any] = {"role": turn.role, "content": turn.content or ""}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments, sort_keys=True)},
            }
            for c in turn.calls
        ]
    return message


def tau2_messages(turns: list[Turn]) -> list[Any]:
    """The turns as tau2 messages, for its environment replay and evaluators."""
    from benchmark.task_success.tau2_env import tau2_loaded

    tau2_loaded()  # tau2 imported as the arm imports it (its .env loader neutralised)
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage

    out: list[Any] = []
    for turn in turns:
        calls = [ToolCall(**c.model_dump()) for c in turn.calls] or None
        if turn.role == "tool":
            out.append(
                ToolMessage(
                    id=turn.call_id or "",
                    role="tool",
                    content=turn.content,
                    requestor=turn.requestor,
                    error=turn.error,
                )
            )
        elif turn.role == "assistant":
            out.append(AssistantMessage(role="assistant", content=turn.content, tool_calls=calls))
        else:
            out.append(UserMessage(role="user", content=turn.content, tool_calls=calls))
    return out


def from_tau2(message: dict[str, Any]) -> Turn:
    """One message of a tau2 log (``SimulationRun.messages``) as a turn."""
    role = message.get("role")
    if role == "tool":
        return Turn(
            role="tool",
            content=_text(message.get("content")),
            call_id=str(message.get("id", "")),
            requestor=message.get("requestor") or "assistant",
            error=bool(message.get("error")),
        )
    if role not in ("assistant", "user"):
        raise ValueError(f"unexpected role {role!r}")
    calls = [
        Call(
            id=str(c.get("id", "")),
            name=str(c["name"]),
            arguments=c.get("arguments") or {},
            requestor=c.get("requestor") or role,
        )
        for c in message.get("tool_calls") or []
    ]
    return Turn(role=role, content=_text(message.get("content")), calls=calls)


def import_results(path: Path) -> list[tuple[Session, dict[str, Any] | None]]:
    """The simulations of a tau2 ``results.json``, each with its logged task (None when the
    file does not carry it); a file that is not one is a user error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        domain = data["info"]["environment_info"]["domain_name"]
        logged_tasks = {str(t["id"]): t for t in data.get("tasks") or []}
        found = []
        for n, sim in enumerate(data["simulations"]):
            if sim.get("skipped"):
                continue
            turns = [from_tau2(m) for m in sim["messages"] if m.get("role") != "system"]
            reward = (sim.get("reward_info") or {}).get("reward")
            session = Session(
                domain=str(domain),
                task_id=str(sim["task_id"]),
                turns=turns,
                reward=None if reward is None else float(reward),
                ended=sim.get("termination_reason") in ("user_stop", "agent_stop"),
                source=f"{path}#simulation {n}",
            )
            found.append((session, logged_tasks.get(str(sim["task_id"]))))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read it: {exc.__class__.__name__}") from None
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise UserError(
            f"{path}: not a tau2 results file (info.environment_info.domain_name, "
            f"simulations[].messages): {type(exc).__name__}: {detail[:200]}"
        ) from None
    if not found:
        raise UserError(f"{path}: a tau2 results file with no simulation")
    return found


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
