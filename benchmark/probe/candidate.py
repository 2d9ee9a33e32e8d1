"""What every per-type extractor produces and reads: candidates and the region view."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from benchmark.activity.actions import Action, extract
from benchmark.activity.operations import FileOp, file_ops
from benchmark.compaction import CompactionPoint
from benchmark.probe.models import Evidence, Fact, ProbeType
from benchmark.probe.runs import TestRun, test_runs
from benchmark.probe.text import quote_around
from benchmark.transcript.models import Transcript


@dataclass(frozen=True)
class Candidate:
    """A probe before selection and numbering. ``anchor`` is the message it is about."""

    type: ProbeType
    question: str
    answer: str
    facts: tuple[Fact, ...]
    evidence: tuple[Evidence, ...]
    anchor: int
    priority: bool = False


@dataclass
class View:
    """The messages one compaction point lets the extractor see.

    ``start``/``stop`` bound the region (where questions come from); messages
    up to ``end`` (the tail) are visible only to learn the state at the point.
    Nothing before ``start`` is ever read.
    """

    transcript: Transcript
    start: int
    stop: int
    end: int
    texts: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, transcript: Transcript, point: CompactionPoint) -> View:
        end = min(point.end, len(transcript.messages))
        stop = min(point.tail_start, end)
        msgs = transcript.messages
        texts = {i: msgs[i].render() for i in range(point.head_end, end)}
        return cls(transcript, point.head_end, stop, end, texts)

    def in_region(self, index: int | None) -> bool:
        return index is not None and self.start <= index < self.stop

    def region_indices(self) -> range:
        return range(self.start, self.stop)

    @cached_property
    def actions(self) -> list[Action]:
        """Actions called from the region or the tail (results may reach into the tail)."""
        return extract(self.transcript.messages, self.texts, self.start, self.end)

    @cached_property
    def file_ops(self) -> list[FileOp]:
        return file_ops(self.actions, self.texts)

    @cached_property
    def test_runs(self) -> list[TestRun]:
        return test_runs(self.actions)

    def evidence(self, index: int | None, needle: str) -> Evidence | None:
        """Evidence quoting ``needle`` in region message ``index``, if it is there verbatim."""
        if not self.in_region(index) or not needle:
            return None
        assert index is not None
        quote = quote_around(self.texts[index], needle)
        return Evidence(message_index=index, quote=quote) if quote else None
