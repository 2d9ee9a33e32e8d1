"""Summarizing policies: the region becomes a sectioned summary from a pluggable summarizer.

Also home of the helpers the summarizing policies share: the summarizer
check and the neutral summary message (which region messages are dropped is
:mod:`benchmark.policy.spans`'s). A summarizer only ever receives
the dropped messages and the policy's own earlier summary (region scoping).
"""

from __future__ import annotations

from typing import Any

from benchmark.policy.base import check_int
from benchmark.policy.spans import region_dropped, splice
from benchmark.run.compaction import Segments
from benchmark.summarizer.base import Summarizer, SummaryRequest
from benchmark.summarizer.extractive import ExtractiveSummarizer
from benchmark.transcript.models import Message

# Neutral framing of our own wording: no policy or method name reaches the answerer or judge.
SUMMARY_HEADING = "Summary of the earlier part of this session, which is no longer shown:"
MIN_SUMMARY_TOKENS = 64

REGENERATIVE_SECTIONS: tuple[str, ...] = (
    "Primary request and intent",
    "Key technical concepts",
    "Files and code sections",
    "Errors and fixes",
    "Problem solving",
    "All user messages",
    "Pending tasks",
    "Current work",
    "Optional next step",
)
ANCHORED_SECTIONS: tuple[str, ...] = (
    "Session intent",
    "Files modified",
    "Decisions",
    "Current state",
    "Next steps",
)


def check_summarizer(summarizer: Any) -> Summarizer:
    """``summarizer``, or the offline one when ``None`` (configs that do not inject one)."""
    if summarizer is None:
        return ExtractiveSummarizer()
    if not callable(getattr(summarizer, "summarize", None)):
        raise ValueError(f"summarizer must have a summarize(request) method, got {summarizer!r}")
    return summarizer


def summarize(
    summarizer: Summarizer,
    region: list[Message],
    sections: tuple[str, ...],
    max_tokens: int,
    previous: str | None = None,
) -> str:
    request = SummaryRequest(
        region=region, previous_summary=previous, sections=list(sections), max_tokens=max_tokens
    )
    text = summarizer.summarize(request)
    if not isinstance(text, str):
        raise TypeError(f"{type(summarizer).__name__}.summarize must return str, got {text!r}")
    return text


def summary_message(*blocks: str) -> Message:
    """The single ``user`` message that stands in for the dropped messages."""
    return Message(role="user", content="\n\n".join([SUMMARY_HEADING, *blocks]))


class SummaryPolicy:
    """What every summarizing policy holds: its summarizer and the summary's token bound."""

    def __init__(self, summarizer: Summarizer | None, summary_tokens: int) -> None:
        self.summarizer = check_summarizer(summarizer)
        self.summary_tokens = check_int("summary_tokens", summary_tokens, MIN_SUMMARY_TOKENS)

    def summarize(
        self, region: list[Message], sections: tuple[str, ...], previous: str | None = None
    ) -> str:
        """The summary of ``region`` under ``sections``, within ``summary_tokens``."""
        return summarize(self.summarizer, region, sections, self.summary_tokens, previous)


class Regenerative(SummaryPolicy):
    """Head + a summary regenerated from scratch at every compaction + tail.

    Modelled on Claude Code's compaction prompt, whose nine sections are
    used as is (:data:`REGENERATIVE_SECTIONS`). No earlier summary is passed:
    at a later compaction point the region (which includes the earlier
    regions) is summarized anew. ``summary_tokens`` bounds the summary text.
    """

    def __init__(self, *, summarizer: Summarizer | None = None, summary_tokens: int = 8_000):
        super().__init__(summarizer, summary_tokens)

    def compact(self, segments: Segments) -> list[Message]:
        messages, dropped = segments.messages, region_dropped(segments)
        if not dropped:
            return messages
        text = self.summarize([messages[i] for i in dropped], REGENERATIVE_SECTIONS)
        return splice(messages, dropped, [summary_message(text)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(summary_tokens={self.summary_tokens})"


class AnchoredIterative(SummaryPolicy):
    """Head + one persistent sectioned summary, extended at each compaction + tail.

    The summary (:data:`ANCHORED_SECTIONS`) is kept between ``compact``
    calls. When the messages to drop start with exactly the messages this
    instance summarized last time (a later compaction point of the same
    session: regions grow from the same start), only the newly dropped span
    is sent, with the stored summary as ``previous_summary`` to merge into.
    Under iterative replay the region instead opens with this instance's own
    last summary message; then the rest of the region is the new span.
    Otherwise (another session, or points out of order) it starts afresh.
    Points of one session must therefore be compacted in order on one
    instance for the iterative behaviour; each call's output is still
    complete on its own. ``summary_tokens`` bounds the summary text.
    """

    def __init__(self, *, summarizer: Summarizer | None = None, summary_tokens: int = 8_000):
        super().__init__(summarizer, summary_tokens)
        self._summarized: list[Message] = []
        self._summary: str | None = None

    def compact(self, segments: Segments) -> list[Message]:
        messages, dropped = segments.messages, region_dropped(segments)
        if not dropped:
            return messages
        gone = [messages[i] for i in dropped]
        if self._summary is not None and gone[0] == summary_message(self._summary):
            # Iterative replay: the region opens with this instance's own summary.
            text = (
                self.summarize(gone[1:], ANCHORED_SECTIONS, self._summary)
                if len(gone) > 1
                else self._summary
            )
            self._summarized, self._summary = gone, text
            return splice(messages, dropped, [summary_message(text)])
        known = len(self._summarized)
        continues = self._summary is not None and known and gone[:known] == self._summarized
        if continues and known == len(gone):
            text = self._summary
        else:
            previous = self._summary if continues else None
            new = gone[known:] if continues else gone
            text = self.summarize(new, ANCHORED_SECTIONS, previous)
        self._summarized, self._summary = gone, text
        return splice(messages, dropped, [summary_message(text)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(summary_tokens={self.summary_tokens})"
