"""The agent and the user simulator, each an endpoint driven through the repo's LLM layer.

Both are plain chat calls (:class:`benchmark.llm.client.LLMClient`: the reply cache,
retries, concurrency limit and usage ledger every other role has). tau2's own agent
and user (litellm) are never used, nor their prompts: these are ours.

The agent acts by a JSON protocol rather than native tool calling, so it works the
same on every OpenAI-compatible server and through the structured-output ladder:
each turn is ``{"action": "tool", "name": ..., "arguments": {...}}`` (the
environment answers) or ``{"action": "reply", "message": ...}`` (the customer
answers). Its history is its own conversation in its roles: its turns as those
JSON actions, tool results and the customer's words as user messages, and whatever
a compaction policy left (a summary, a placeholder) as it left it.

A customer with tools of its own (telecom's, on its phone) acts by the same JSON
protocol, its tools listed in its prompt: a tool action runs in the environment as a
user's call (``requestor="user"``), and its result comes back to the customer alone,
as tau2 routes it; the agent sees only what the customer then says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchmark.llm import Endpoint, UsageLedger
from benchmark.llm.client import LLMClient
from benchmark.llm.json_reply import extract_json
from benchmark.llm.reply_cache import ResponseCache
from benchmark.task_success.marks import (
    AGENT_MARK,
    CONTINUE,
    STOP,
    TICKET,
    TOOL_RESULT,
    USER_MARK,
    USER_TOOLS,
    WAITING,
)
from benchmark.task_success.session import Turn, seen_by_user
from benchmark.transcript.models import Message

AGENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["tool", "reply"]},
        "name": {"type": "string"},
        "arguments": {"type": "object"},
        "message": {"type": "string"},
    },
    "required": ["action"],
}


@dataclass(frozen=True)
class Step:
    """One agent turn: a tool call (``name``, ``arguments``) or a message to the customer."""

    action: str
    name: str = ""
    arguments: dict[str, Any] | None = None
    message: str = ""
    tokens: int = 0


def parse_step(text: str) -> Step:
    """The agent's reply as a step; ValueError (the client asks again) when unusable."""
    data = extract_json(text)
    action = data.get("action")
    if action == "tool":
        name, arguments = data.get("name"), data.get("arguments", {})
        if not isinstance(name, str) or not name:
            raise ValueError("a tool action needs 'name'")
        if not isinstance(arguments, dict):
            raise ValueError("'arguments' must be an object")
        return Step("tool", name=name, arguments=arguments)
    if action == "reply" and isinstance(data.get("message"), str):
        return Step("reply", message=data["message"])
    raise ValueError('the reply must be {"action": "tool", ...} or {"action": "reply", ...}')


def agent_system(domain: str, policy: str, tools: tuple[dict[str, Any], ...]) -> str:
    listed = json.dumps([t.get("function", t) for t in tools], sort_keys=True)
    return (
        f"{AGENT_MARK} You serve customers of the {domain} domain and must follow its policy.\n"
        "Each turn, reply with one JSON object and nothing else:\n"
        '- {"action": "tool", "name": "<tool>", "arguments": {...}} to call one tool; its '
        "result comes back in the next message;\n"
        '- {"action": "reply", "message": "<text>"} to write to the customer.\n'
        "Use only what the conversation states; ask the customer for what you need. "
        "When the request is done or cannot be done, tell the customer.\n\n"
        f"# Policy\n{policy}\n\n# Tools (JSON schemas)\n{listed}"
    )


def action_text(message: Message) -> str:
    """An assistant message as the JSON action(s) the agent wrote."""
    lines = []
    for call in message.tool_calls or []:
        args = call.function.args()
        lines.append(json.dumps({"action": "tool", "name": call.function.name, "arguments": args}))
    if message.content and not lines:
        return json.dumps({"action": "reply", "message": message.content})
    return "\n".join([message.content, *lines] if message.content else lines)


def agent_messages(system: str, context: list[Message]) -> list[dict[str, str]]:
    """The chat request of one agent turn: its system prompt and its (compacted) history."""
    out = [{"role": "system", "content": system}]
    for m in context:
        if m.role == "assistant":
            out.append({"role": "assistant", "content": action_text(m)})
        elif m.role == "tool":
            out.append(
                {
                    "role": "user",
                    "content": f"{TOOL_RESULT.format(id=m.tool_call_id)}\n{m.render()}",
                }
            )
        else:  # the customer, or what a policy put in its place (a summary, a note)
            out.append({"role": "user", "content": m.render()})
    if context and context[-1].role == "assistant":  # the customer has not answered yet
        out.append({"role": "user", "content": CONTINUE})
    return out


def user_system(
    domain: str, task_ref: str, instructions: str, tools: tuple[dict[str, Any], ...] = ()
) -> str:
    """The customer's prompt; with ``tools`` (its own, e.g. its phone's), also how to use
    them: the JSON protocol the agent uses, and the tools' schemas."""
    prompt = (
        f"{USER_MARK} It is the {domain} company's agent you talk to.\n"
        f"{TICKET}{task_ref}\n"
        "Write only what you, the customer, say: one short message per turn. Open with "
        "why you are calling. Give what you know when asked; do not invent details you "
        "were not given. Follow the scenario's instructions. When your request is handled, "
        f"or cannot be, write {STOP} alone on the last line.\n\n# Scenario\n{instructions}"
    )
    if not tools:
        return prompt
    listed = json.dumps([t.get("function", t) for t in tools], sort_keys=True)
    return (
        f"{prompt}\n\n# How you act\nYou can use tools on your own device; the agent cannot "
        "see them or their results, only what you tell it. Each turn, reply with one JSON "
        "object and nothing else:\n"
        '- {"action": "tool", "name": "<tool>", "arguments": {...}} to use one of your tools; '
        "its result comes back to you in the next message;\n"
        '- {"action": "reply", "message": "<text>"} to say something to the agent.\n'
        "Do what the agent asks on your device with your tools, and report what they show; "
        f"never make up a result.\n\n{USER_TOOLS}\n{listed}"
    )


def scenario_text(task: Any) -> str:
    """A tau2 task's user scenario as plain text (its instructions are what the user knows)."""
    scenario = task.user_scenario
    instructions = scenario.instructions
    if isinstance(instructions, str):
        parts = [instructions]
    else:
        parts = [
            f"{label}: {value}"
            for label, value in (
                ("Reason for the call", instructions.reason_for_call),
                ("What you know", instructions.known_info),
                ("What you do not know", instructions.unknown_info),
                ("How to behave", instructions.task_instructions),
            )
            if value
        ]
    if scenario.persona:
        parts.insert(0, f"Persona: {scenario.persona}")
    return "\n".join(parts)


def user_messages(system: str, conversation: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The user simulator's request: the conversation from its side (its turns are the
    'assistant' ones); it never sees tool results."""
    out = [{"role": "system", "content": system}]
    for role, text in conversation:
        out.append({"role": "assistant" if role == "user" else "user", "content": text})
    if len(out) == 1 or out[-1]["role"] == "assistant":
        out.append({"role": "user", "content": WAITING})
    return out


class Role:
    """One endpoint in the agent or user role: the repo's LLM client, nothing else."""

    def __init__(
        self,
        endpoint: Endpoint,
        role: str,
        ledger: UsageLedger,
        cache: ResponseCache | None,
    ) -> None:
        self.client = LLMClient(endpoint, role, ledger, cache)

    async def act(self, system: str, context: list[Message]) -> Step:
        """The agent's next step from its system prompt and (compacted) history."""
        completion, step = await self.client.acomplete(
            agent_messages(system, context), schema=AGENT_SCHEMA, parse=parse_step
        )
        assert step is not None
        tokens = completion.input_tokens + completion.output_tokens
        return Step(step.action, step.name, step.arguments, step.message, tokens)

    async def say(self, system: str, conversation: list[tuple[str, str]]) -> tuple[str, int]:
        """The user simulator's next message, and the tokens it cost."""
        completion, _ = await self.client.acomplete(user_messages(system, conversation))
        return completion.text.strip(), completion.input_tokens + completion.output_tokens

    async def user_act(self, system: str, conversation: list[tuple[str, str]]) -> Step:
        """The next step of a customer with tools of its own: a message (``reply``) or a
        call of one of its tools, by the agent's JSON protocol."""
        completion, step = await self.client.acomplete(
            user_messages(system, conversation), schema=AGENT_SCHEMA, parse=parse_step
        )
        assert step is not None
        tokens = completion.input_tokens + completion.output_tokens
        return Step(step.action, step.name, step.arguments, step.message, tokens)


def user_view(turns: list[Turn], with_tools: bool) -> list[tuple[str, str]]:
    """What the customer has seen, as ``(role, text)``: the agent's words and its own turns;
    ``with_tools`` (a customer with tools), its turns as its JSON actions and its tools'
    results too, never the agent's tool traffic (tau2's user history)."""
    if not with_tools:
        return [(t.role, t.content) for t in turns if t.role in ("user", "assistant") and t.content]
    out = []
    for t in turns:
        if not seen_by_user(t):
            continue
        if t.role == "assistant":
            out.append(("assistant", t.content or ""))
        elif t.role == "tool":
            out.append(("tool", f"{TOOL_RESULT.format(id=t.call_id)}\n{t.content or ''}"))
        else:
            lines = [json.dumps({"action": "reply", "message": t.content})] if t.content else []
            lines += [
                json.dumps({"action": "tool", "name": c.name, "arguments": c.arguments})
                for c in t.calls
            ]
            out.append(("user", "\n".join(lines)))
    return out
