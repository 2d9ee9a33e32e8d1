"""Keep the head plus the most recent messages that fit a token budget.

A tool call and its results are kept or dropped together
(:func:`benchmark.policy.spans.tool_spans`).
"""

from __future__ import annotations

from benchmark.policy.base import check_int
from benchmark.policy.spans import protected_end, tool_spans
from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message


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
