"""Replace old tool outputs with a one-line note, keeping every other message.

Also home of the note and the copy helper shared with tool-result clearing.
"""

from __future__ import annotations

import re
from typing import Any

from benchmark.compaction import Segments
from benchmark.policy.truncate import check_int
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


class ObservationMask:
    """Keep the last ``keep_last`` tool results verbatim; older ones become a note.

    Observation masking as in SWE-agent's ``last_n_observations`` history
    processor (older outputs become "(n lines omitted)"; its shipped configs
    use n=5). The default ``keep_last=10`` is the window The Complexity Trap
    (Lindenbauer et al. 2025, arXiv:2508.21433) found best for SWE-agent on
    SWE-bench Verified; OpenHands' summarizing condenser instead keeps up to
    100 events (``max_size``). Counting spans the whole context (head, region,
    tail); calls, ``tool_call_id``s and non-tool messages are untouched.
    """

    def __init__(self, *, keep_last: int = 10) -> None:
        self.keep_last = check_int("keep_last", keep_last, 0)

    def compact(self, segments: Segments) -> list[Message]:
        messages = segments.messages
        results = [i for i, m in enumerate(messages) if m.role == "tool"]
        masked = set(results[: max(len(results) - self.keep_last, 0)])
        return [
            replaced(m, content=omitted_note(m.content)) if i in masked and not is_omitted(m) else m
            for i, m in enumerate(messages)
        ]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(keep_last={self.keep_last})"
