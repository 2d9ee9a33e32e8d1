"""Replace old tool outputs with a one-line note, keeping every other message.

The note and the copy are shared with tool-result clearing (:mod:`benchmark.policy.spans`).
"""

from __future__ import annotations

from benchmark.policy.base import check_int
from benchmark.policy.spans import is_omitted, omitted_note, replaced
from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message


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
