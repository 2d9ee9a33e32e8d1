"""Reading a chat completion body that any server, broken or hostile, may have sent.

A reply is data from the network: every field may be missing or of any JSON
type, the body may be HTML, an event stream, JSON that is not an object, nested
past Python's recursion limit, or far larger than any completion. This module
turns a body into the few values the client uses (``text``, token counts,
``finish_reason``) or raises :class:`~benchmark.llm.retry.MalformedReply` with one
short line saying what was wrong, so a bad reply fails its call (retried like
a 5xx, counted, then recorded on its probe) and never the job.

Usage counts are not worth failing a good reply for: a count that is not a
non-negative integer of sane size is taken as unknown (0), so costs never go
negative, NaN or infinite.
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchmark.llm.retry import MalformedReply
from benchmark.redaction import clip

# Largest token count believed (far over any context window); a larger one is unknown.
MAX_TOKENS_COUNT = 10**12
_SURROGATE = re.compile("[\ud800-\udfff]")
_PREVIEW = 80  # characters of an unreadable body a message quotes


def kind_of(value: object) -> str:
    """The JSON type of ``value``, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def preview(raw: bytes) -> str:
    """The start of an unreadable body, on one line, for a message."""
    return clip(raw[: _PREVIEW * 4].decode("utf-8", "replace"), _PREVIEW, first_line=True)


def read_chat_reply(raw: bytes, content_type: str = "") -> dict[str, Any]:
    """``text``, ``input_tokens``, ``output_tokens`` and ``finish_reason`` of a chat
    completion body; :class:`MalformedReply` naming what is wrong when there are none."""
    if "text/event-stream" in content_type.lower() or raw.lstrip()[:5] == b"data:":
        raise MalformedReply("reply is an event stream (streaming was not asked for)")
    try:
        reply = json.loads(raw)
    except RecursionError:
        raise MalformedReply("reply JSON is nested too deeply to read") from None
    except ValueError as exc:  # also invalid UTF-8, and integers of more than 4300 digits
        shown = content_type.split(";")[0].strip() or "no content-type"
        what = f"reply is not JSON ({shown}, {len(raw):,} bytes: {preview(raw)!r})"
        if raw.strip() and raw.lstrip()[:1] in b"{[":
            what = f"reply is not valid JSON ({clip(str(exc), 80, first_line=True)})"
        raise MalformedReply(what) from None
    if not isinstance(reply, dict):
        raise MalformedReply(f"reply is {kind_of(reply)}, not a JSON object")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices:
        error = reply.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            text = clip(str(message), 200, first_line=True)
            raise MalformedReply(f"the server answered 200 with an error: {text}")
        what = "no choices" if choices is None else f"choices {_described(choices)}"
        raise MalformedReply(f"reply has {what}")
    first = choices[0]
    if not isinstance(first, dict):
        raise MalformedReply(f"reply's choices[0] is {kind_of(first)}, not an object")
    message = first.get("message")
    if not isinstance(message, dict):
        raise MalformedReply(f"reply's choices[0].message is {kind_of(message)}, not an object")
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    finish = first.get("finish_reason")
    return {
        "text": message_text(message.get("content")),
        "input_tokens": token_count(usage.get("prompt_tokens")),
        "output_tokens": token_count(usage.get("completion_tokens")),
        "finish_reason": finish if isinstance(finish, str) and len(finish) <= 64 else None,
    }


def message_text(content: object) -> str:
    """A message's ``content`` as text: a string, none (``""``: a reply of tool calls or a
    refusal only), or a list of typed parts with text (as some servers send); anything
    else is a malformed reply."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("text", ""), str) for part in content
    ):
        return "".join(part.get("text", "") for part in content)
    raise MalformedReply(f"reply's message content is {kind_of(content)}, not text")


def token_count(value: object) -> int:
    """A usage count as the server gave it, or 0 (unknown) when it is not a believable
    count: negative, fractional, huge, a string, a boolean, null."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value <= MAX_TOKENS_COUNT else 0


def safe_text(text: str) -> str:
    """``text`` as valid Unicode: a lone surrogate (``"\\ud800"`` is valid JSON) would fail
    every later write of it as UTF-8, so it becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def cut_text(text: str, max_chars: int, where: str) -> str:
    """``text`` cut to ``max_chars`` characters, with a note saying so and why (``where``
    names the setting) when it was longer."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n[cut: the reply held {len(text):,} characters, over {where}]"


def sane_value(value: dict[str, Any], max_chars: int, where: str) -> dict[str, Any]:
    """A sent call's value as the ledger, cache and callers may take it, whatever path
    read it: text a valid string of at most ``max_chars`` (cut, see :func:`cut_text`),
    believable token counts, a string ``finish_reason`` or None."""
    text = value.get("text")
    if not isinstance(text, str):
        raise MalformedReply(f"reply text is {kind_of(text)}, not a string")
    finish = value.get("finish_reason")
    return {
        **value,
        "text": safe_text(cut_text(text, max_chars, where)),
        "input_tokens": token_count(value.get("input_tokens")),
        "output_tokens": token_count(value.get("output_tokens")),
        "finish_reason": finish if isinstance(finish, str) and len(finish) <= 64 else None,
    }


def usable_hit(hit: dict[str, Any], max_chars: int, where: str) -> dict[str, Any] | None:
    """A cached reply read as a sent one is now (a cache filled by an older version may
    hold any reply text); None: unusable, to be asked again."""
    try:
        return sane_value(hit, max_chars, where)
    except MalformedReply:
        return None


def _described(choices: object) -> str:
    return "empty" if choices == [] else f"is {kind_of(choices)}, not a list"
