"""The uncompacted control arm: the recall ceiling every other policy is compared with."""

from __future__ import annotations

from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message


class NoCompaction:
    """Keep head, region and tail unchanged.

    The seed harness's ``--also-uncompacted`` arm: answering from the full
    context bounds what any compaction could retain.
    """

    def compact(self, segments: Segments) -> list[Message]:
        return segments.messages

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
