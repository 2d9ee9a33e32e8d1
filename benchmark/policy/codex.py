"""Handoff summary plus the most recent user messages, after Codex's compaction."""

from __future__ import annotations

from benchmark.activity import extract
from benchmark.policy.base import check_int
from benchmark.policy.spans import region_dropped, splice
from benchmark.policy.summarizing import SummaryPolicy, summary_message
from benchmark.run.compaction import Segments
from benchmark.summarizer.base import Summarizer
from benchmark.transcript.models import Message

HANDOFF_SECTIONS: tuple[str, ...] = (
    "Progress so far",
    "Key decisions and constraints",
    "Open work",
    "Next steps",
)


def person_messages(messages: list[Message]) -> list[int]:
    """Indices of ``user`` messages written by a person, not an environment's reply to a
    text command (SWE-agent style sessions put observations in ``user`` messages)."""
    texts = {i: m.render() for i, m in enumerate(messages)}
    replies = {a.result_index for a in extract(messages, texts, 0, len(messages))}
    return [
        i
        for i, m in enumerate(messages)
        if m.role == "user" and (m.content or "").strip() and i not in replies
    ]


class Codex(SummaryPolicy):
    """Head + the newest user messages within ``user_message_tokens`` + a handoff summary + tail.

    Codex (codex-rs ``core/src/compact.rs``) rebuilds history from the user
    messages, newest first up to ``COMPACT_USER_MESSAGE_MAX_TOKENS`` (20,000),
    then a handoff summary. Here the protected head and tail stay; the
    tail's user messages count against the budget first (they are kept
    anyway), then the region's, newest first, stopping at the first that does
    not fit (oldest dropped first). Kept region user messages come before the
    summary, as in Codex. The summary sections (:data:`HANDOFF_SECTIONS`) and
    ``summary_tokens`` are our choice.
    """

    def __init__(
        self,
        *,
        summarizer: Summarizer | None = None,
        user_message_tokens: int = 20_000,
        summary_tokens: int = 8_000,
    ) -> None:
        super().__init__(summarizer, summary_tokens)
        self.user_message_tokens = check_int("user_message_tokens", user_message_tokens, 0)

    def compact(self, segments: Segments) -> list[Message]:
        messages, dropped = segments.messages, region_dropped(segments)
        stop = len(segments.head) + len(segments.region)
        if not dropped:
            return messages
        users = person_messages(messages)
        used = sum(messages[i].tokens for i in users if i >= stop)
        recent: list[int] = []
        for i in reversed([i for i in users if i in set(dropped)]):
            if used + messages[i].tokens > self.user_message_tokens:
                break
            used += messages[i].tokens
            recent.insert(0, i)
        text = self.summarize([messages[i] for i in dropped], HANDOFF_SECTIONS)
        kept = [messages[i] for i in recent]
        return splice(messages, dropped, [*kept, summary_message(text)])

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(user_message_tokens={self.user_message_tokens}, "
            f"summary_tokens={self.summary_tokens})"
        )
