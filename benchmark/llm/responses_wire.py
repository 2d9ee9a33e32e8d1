"""Our chat-format messages as Responses API input items, and compacted output back.

Server-side compaction and the answerer that continues from it speak the
Responses API, whose conversation is a list of typed items rather than chat
messages. Tool calls and results become ``function_call`` and
``function_call_output`` items; an encrypted compaction item goes back to
the provider as the ``compaction`` item it came from, id included (the
ciphertext is tied to it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchmark.llm.endpoint import DEFAULT_BASE_URL, Endpoint, normalise_base_url
from benchmark.transcript.models import FunctionCall, Message, OpaqueItem, Role, ToolCall

DEFAULT_PROVIDER = "default"
# Output message roles as ours; the developer's instructions are a system message.
_ROLES: dict[str, Role] = dict(user="user", assistant="assistant", system="system")
_ROLES["developer"] = "system"


def provider_of(endpoint: Endpoint) -> str:
    """Who can read an item this endpoint made: its base URL, ``"default"`` for the SDK's."""
    url = normalise_base_url(endpoint.base_url)
    return DEFAULT_PROVIDER if url == DEFAULT_BASE_URL else url


def to_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Input items for ``messages``, in order; a message with nothing to say sends nothing."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.compaction is not None:
            item: dict[str, Any] = {
                "type": "compaction",
                "encrypted_content": message.compaction.encrypted_content,
            }
            if message.compaction.item_id:
                item["id"] = message.compaction.item_id
            items.append(item)
        elif message.role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content or "",
                }
            )
        else:
            if message.content:
                items.append({"type": "message", "role": message.role, "content": message.content})
            for call in message.tool_calls or []:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.function.name,
                        "arguments": call.function.arguments,
                    }
                )
    return items


def from_output(
    items: Sequence[dict[str, Any]], provider: str, model: str, tokens: int
) -> list[Message]:
    """Messages for a compact response's output (kept messages, then one compaction item).

    ``tokens`` is the provider's size of the compaction item. An item type
    the benchmark cannot represent raises ``ValueError`` naming it, rather
    than being dropped unseen.
    """
    messages: list[Message] = []
    for item in items:
        kind = item.get("type")
        if kind == "compaction":
            opaque = OpaqueItem(
                encrypted_content=str(item.get("encrypted_content") or ""),
                item_id=item.get("id"),
                provider=provider,
                model=model,
                tokens=tokens,
            )
            messages.append(Message(role="user", compaction=opaque))
        elif kind == "message":
            role = _ROLES.get(str(item.get("role")))
            if role is None:
                raise ValueError(f"output message has unknown role {item.get('role')!r}")
            messages.append(Message(role=role, content=_text(item.get("content"))))
        elif kind == "function_call":
            call = ToolCall(
                id=str(item.get("call_id")),
                function=FunctionCall(
                    name=str(item.get("name")), arguments=item.get("arguments") or "{}"
                ),
            )
            messages.append(Message(role="assistant", tool_calls=[call]))
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output, sort_keys=True)
            call_id = str(item.get("call_id"))
            messages.append(Message(role="tool", tool_call_id=call_id, content=text))
        else:
            raise ValueError(f"output item of type {kind!r} cannot be kept as a message")
    return messages


def _text(content: Any) -> str:
    """Text of a message item's content: a string, or typed parts with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def response_usage(reply: Any) -> dict[str, int]:
    """Input and output tokens of a Responses API reply; 0 when the server sent no usage."""
    usage = getattr(reply, "usage", None)
    return {
        "input_tokens": getattr(usage, "input_tokens", 0) or 0,
        "output_tokens": getattr(usage, "output_tokens", 0) or 0,
    }
