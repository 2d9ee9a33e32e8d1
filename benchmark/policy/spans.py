"""Where a policy may cut a context, and how it marks what it cut.

Every policy cuts at tool spans (an assistant's calls with their results, kept
or dropped together so nothing is orphaned), and the policies that replace
or summarize messages share the copy, the omission note and the splice.
"""

from __future__ import annotations

import re
from typing import Any

from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message

_NOTE = re.compile(r"\[earlier tool output omitted: \d+ lines?\]")


def omitted_note(content: str | None) -> str:
    """Neutral stand-in for a removed tool output, saying how much was removed."""
    lines = len((content or "").splitlines())
    return f"[earlier tool output omitted: {lines} line{'' if lines == 1 else 's'}]"


def is_omitted(message: Message) -> bool:
    """True for a tool result an earlier compaction already replaced (kept as is)."""
    return message.role == "tool" and bool(_NOTE.fullmatch(message.content or ""))


def replaced(message: Message, **update: Any) -> Message:
    """A validated copy of ``message`` with ``update`` applied.

    ``model_copy`` would carry over the cached ``tokens`` of the original, so
    the copy is rebuilt from its fields instead.
    """
    return Message.model_validate({**message.model_dump(exclude_none=True), **update})


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


def dropped_indices(messages: list[Message], start: int, stop: int) -> list[int]:
    """Indices in ``[start, stop)`` to summarize away: all but messages of a tool span
    that crosses ``start`` or ``stop`` (those stay verbatim so nothing is orphaned)."""
    keep: set[int] = set()
    for span in tool_spans(messages):
        last = span.stop - 1
        if span.start < start <= last or span.start < stop <= last:
            keep.update(i for i in span if start <= i < stop)
    return [i for i in range(start, stop) if i not in keep]


def region_dropped(segments: Segments) -> list[int]:
    """:func:`dropped_indices` of the region of ``segments`` (indices into its messages)."""
    start = len(segments.head)
    return dropped_indices(segments.messages, start, start + len(segments.region))


def splice(messages: list[Message], dropped: list[int], inserted: list[Message]) -> list[Message]:
    """``messages`` with the contiguous run ``dropped`` replaced by ``inserted``."""
    return [*messages[: dropped[0]], *inserted, *messages[dropped[-1] + 1 :]]
