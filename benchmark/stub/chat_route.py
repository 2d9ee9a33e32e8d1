"""Payloads of the stub's chat route (``/v1/chat/completions``) and its default reply."""

from __future__ import annotations

from typing import Any

from benchmark.stub.responses import CREATED, count_words, last_user_text


class Cut(str):
    """A reply text the chat route serves with ``finish_reason: length`` (cut at max_tokens):
    a reply hook returns ``Cut("...")`` to script a truncated reply."""


def message_text(message: dict[str, Any]) -> str:
    """Text of a chat message whose content is a string or a list of typed parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def default_reply(body: dict[str, Any]) -> str:
    """Short, deterministic echo; ``{}`` when JSON output was requested so it still parses."""
    fmt = body.get("response_format") or (body.get("text") or {}).get("format") or {}
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        return "{}"
    if "input" in body:
        last = last_user_text(body)
    else:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        last = message_text(users[-1]) if users else ""
    return "stub reply: " + " ".join(last.split(maxsplit=12)[:12])  # no split of a 20K context


def completion(body: dict[str, Any], content: str, serial: int) -> dict[str, Any]:
    """A ChatCompletion payload with word-count usage, deterministic given the request order."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    prompt_tokens = sum(count_words(message_text(m)) for m in messages)
    completion_tokens = count_words(content)
    return {
        "id": f"chatcmpl-stub-{serial}",
        "object": "chat.completion",
        "created": CREATED,
        "model": str(body.get("model", "stub-model")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "length" if isinstance(content, Cut) else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
