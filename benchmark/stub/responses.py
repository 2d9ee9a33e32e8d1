"""Payloads of the stub's Responses API routes (``/v1/responses``, ``/v1/responses/compact``).

The input check is strict where the real API is: typed items only, and a
``function_call_output`` must follow its ``function_call`` in the same input,
so a caller that orphans a tool result fails here as it would in production.
The stub's "encryption" is reversible (:func:`decrypt`) so tests can see
exactly what was compacted; an earlier compaction item sent back in is
decrypted into the new one, the way a real compaction carries it forward.
"""

from __future__ import annotations

import base64
import json
from typing import Any

# Fixed so responses are byte-for-byte reproducible; the SDK only needs an integer.
CREATED = 1_700_000_000
_PREFIX = "enc:"


# str.split()'s whitespace: the ASCII characters byte for byte, and the other ones
# (rare; a text holding any is split as it is).
_TO_MARKS = bytes(0x20 if chr(i).isspace() else 0x78 for i in range(128)) + b"x" * 128
_OTHER_SPACES = tuple(c for c in map(chr, range(128, 0x3001)) if c.isspace())


def count_words(text: str) -> int:
    """Deterministic stand-in for a tokenizer: whitespace-separated words.

    ``len(text.split())`` without building the words: a job sends a ~100 KB context
    with every call, and splitting it made the stub, not the client, the slow side of
    a throughput run (``benchmarks/job_throughput.py``)."""
    if len(text) < 4096 or (not text.isascii() and any(c in text for c in _OTHER_SPACES)):
        return len(text.split())
    marks = text.encode().translate(_TO_MARKS)  # each space a " ", any other byte an "x"
    return marks.count(b" x") + (marks[:1] == b"x")


def encrypt(texts: list[str]) -> str:
    return _PREFIX + base64.b64encode(json.dumps(texts).encode()).decode()


def decrypt(encrypted_content: str) -> str:
    """The text a stub compaction item stands for (its input texts, one per line)."""
    if not encrypted_content.startswith(_PREFIX):
        raise ValueError(f"not a stub compaction item: {encrypted_content[:20]!r}")
    return "\n".join(json.loads(base64.b64decode(encrypted_content[len(_PREFIX) :])))


def input_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's ``input`` as items (a bare string is one user message)."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    return [item for item in raw or [] if isinstance(item, dict)]


def input_problem(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse this input, or ``None`` when it would accept it."""
    if not body.get("model"):
        return "Missing required parameter: 'model'."
    raw = body.get("input")
    if not isinstance(raw, (str, list)) or (isinstance(raw, list) and not raw):
        return "'input' must be a string or a non-empty list of items"
    calls: set[str] = set()
    for i, item in enumerate(input_items(body) if isinstance(raw, str) else raw):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                return f"input[{i}]: invalid role {item.get('role')!r}"
            if not isinstance(item.get("content"), (str, list)):
                return f"input[{i}]: message content must be a string or a list of parts"
        elif kind == "function_call":
            if not all(isinstance(item.get(k), str) for k in ("call_id", "name", "arguments")):
                return f"input[{i}]: function_call needs string call_id, name and arguments"
            calls.add(item["call_id"])
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                call_id = item.get("call_id")
                return f"No tool call found for function call output with call_id {call_id}."
            if not isinstance(item.get("output"), (str, list)):
                return f"input[{i}]: function_call_output needs an output"
        elif kind == "compaction":
            if not isinstance(item.get("encrypted_content"), str) or not item["encrypted_content"]:
                return f"input[{i}]: compaction item needs encrypted_content"
        else:
            return f"input[{i}]: unsupported item type {kind!r}"
    return None


def item_text(item: dict[str, Any]) -> str:
    """The readable text of one input item (an earlier stub compaction item is decrypted)."""
    kind = item.get("type")
    if kind == "compaction":
        try:
            return decrypt(str(item.get("encrypted_content", "")))
        except ValueError:
            return ""
    if kind == "function_call":
        return f"{item.get('name', '')} {item.get('arguments', '')}"
    if kind == "function_call_output":
        return _content_text(item.get("output"))
    return _content_text(item.get("content"))


def last_user_text(body: dict[str, Any]) -> str:
    users = [i for i in input_items(body) if i.get("type", "message") == "message"]
    users = [i for i in users if i.get("role") == "user"]
    return _content_text(users[-1].get("content")) if users else ""


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """A ``ResponseUsage`` with every field the SDK's model declares."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def response(body: dict[str, Any], text: str | None, serial: int) -> dict[str, Any]:
    """A completed ``Response`` whose one output message says ``text`` (none when ``None``)."""
    prompt = [str(body.get("instructions") or ""), *(item_text(i) for i in input_items(body))]
    output = []
    if text is not None:
        output.append(
            {
                "type": "message",
                "id": f"msg_stub_{serial}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    return {
        "id": f"resp_stub_{serial}",
        "object": "response",
        "created_at": CREATED,
        "model": str(body.get("model", "stub-model")),
        "status": "completed",
        "instructions": body.get("instructions"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "temperature": body.get("temperature"),
        "max_output_tokens": body.get("max_output_tokens"),
        "error": None,
        "incomplete_details": None,
        "usage": usage(sum(count_words(t) for t in prompt), count_words(text or "")),
    }


def compacted(body: dict[str, Any], serial: int) -> dict[str, Any]:
    """A ``response.compaction``: the input's user messages, then one compaction item.

    The item's size is a quarter of the input's (in words), so compaction
    visibly shrinks a context.
    """
    items = input_items(body)
    texts = [item_text(i) for i in items]
    kept = [
        {
            "type": "message",
            "id": f"msg_stub_{serial}_{n}",
            "role": "user",
            "status": "completed",
            "content": [{"type": "input_text", "text": _content_text(item.get("content"))}],
        }
        for n, item in enumerate(items)
        if item.get("type", "message") == "message" and item.get("role") == "user"
    ]
    words = sum(count_words(t) for t in texts)
    return {
        "id": f"cmp_resp_stub_{serial}",
        "object": "response.compaction",
        "created_at": CREATED,
        "output": [
            *kept,
            {"id": f"cmp_stub_{serial}", "type": "compaction", "encrypted_content": encrypt(texts)},
        ],
        "usage": usage(words, words // 4 + 1),
    }


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
