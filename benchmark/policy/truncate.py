"""Keep the head plus the most recent messages that fit a token budget.

Also home of the helpers every LLM-free policy shares: parameter checks and
the grouping of an assistant tool call with its results, which must be kept
or dropped together.
"""

from __future__ import annotations

from typing import Any

from benchmark.compaction import Segments
from benchmark.transcript.models import Message


def check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def tool_spans(messages: list[Message]) -> list[range]:
    """Partition ``messages`` into contiguous spans that are kept or dropped whole.

    An assistant message with ``tool_calls`` and every later ``tool`` message
    answering one of its calls form one span (with whatever lies between
    them), so cutting at span boundaries never orphans a call or a result.
    Every other message is a span of its own.
    """
    results: dict[str, list[int]] = {}
    for j, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id:
            results.setdefault(message.tool_call_id, []).append(j)
    reach = list(range(len(messages)))  # last index each message must stay with
    for i, message in enumerate(messages):
        for call in message.tool_calls or []:
            later = [j for j in results.get(call.id, []) if j > i]
            if later:
                reach[i] = max(reach[i], later[-1])
    spans: list[range] = []
    start = 0
    while start < len(messages):
        end = start
        i = start
        while i <= end:
            end = max(end, reach[i])
            i += 1
        spans.append(range(start, end + 1))
        start = end + 1
    return spans


def protected_end(spans: list[range], head_len: int) -> int:
    """Index after the head, extended over any span the head's last call starts."""
    end = head_len
    for span in spans:
        if span.start < head_len <= span.stop - 1:
            end = span.stop
    return end


class Truncate:
    """Keep the head and the newest messages of region + tail within ``recent_tokens``.

    The classic sliding window. The default of 20,000 tokens is the budget
    Codex keeps of recent user messages when it compacts
    (``COMPACT_USER_MESSAGE_MAX_TOKENS`` in codex-rs ``core/src/compact.rs``)
    and the benchmark's default protected tail. The kept suffix is
    contiguous: walking back from the newest span, the first span that does
    not fit ends it. Spans (a tool call with its results) are never split;
    results of the head's own calls are kept outside the budget. If even the
    newest span does not fit, only the head is kept.
    """

    def __init__(self, *, recent_tokens: int = 20_000) -> None:
        self.recent_tokens = check_int("recent_tokens", recent_tokens, 0)

    def compact(self, segments: Segments) -> list[Message]:
        messages = segments.messages
        spans = tool_spans(messages)
        head_end = protected_end(spans, len(segments.head))
        start, used = len(messages), 0
        for span in reversed(spans):
            if span.start < head_end:
                break
            cost = sum(messages[i].tokens for i in span)
            if used + cost > self.recent_tokens:
                break
            used += cost
            start = span.start
        return messages[:head_end] + messages[start:]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(recent_tokens={self.recent_tokens})"
