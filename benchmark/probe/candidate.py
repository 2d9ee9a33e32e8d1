"""What every per-type extractor produces and reads: candidates and the region view."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from benchmark.activity.actions import Action, extract
from benchmark.activity.operations import FileOp, file_ops
from benchmark.activity.spelling import spelled
from benchmark.probe.models import Evidence, Fact, ProbeType
from benchmark.probe.runs import TestRun, test_runs
from benchmark.probe.text import MAX_FACT, clip, quote_around
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.models import Transcript
from benchmark.transcript.prelude import prelude_end


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


def listing(
    type: ProbeType,
    question: str,
    lead: str,
    facts: Iterable[Fact],
    evidence: Iterable[Evidence],
    anchor: int,
    sep: str = ", ",
) -> Candidate:
    """A candidate whose answer is ``lead`` and its facts, each backticked, joined by ``sep``:
    the one wording of an answer that lists what was found."""
    facts = tuple(facts)
    answer = lead + sep.join(f"`{f.text}`" for f in facts) + "."
    return Candidate(type, question, answer, facts, tuple(evidence), anchor)


@dataclass
class View:
    """The messages one compaction point lets the extractor see.

    ``start``/``stop`` bound the region (where questions come from); messages
    up to ``end`` (the tail) are visible only to learn the state at the point.
    Nothing before ``start`` is ever read, and a summary already in the log
    (``Message.summary``) is seen empty: it is lossy, so no question, gold or
    evidence ever comes from it; so is the session's prelude (system prompt,
    harness-injected AGENTS.md, environment, caveats) when the region holds it
    (``compaction.head_messages`` set to a number): it is not the session's
    work. This is the one place that filter lives: every extractor and the LLM
    writer read messages through a view.
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
        transcript = without_prelude(without_summaries(transcript), point.head_end)
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

    def spelled(self, index: int | None, text: str) -> str | None:
        """``text`` as region message ``index`` holds it: verbatim, else JSON-escaped.

        Every fact, quote and question cue taken from a tool call goes through
        here, so a command like ``grep -n "x" a.py`` is cited the way its
        rendered call spells it (``grep -n \\"x\\" a.py``).
        """
        if not self.in_region(index) or not text:
            return None
        assert index is not None
        return spelled(text, self.texts[index])

    def shown(self, index: int | None, text: str) -> str:
        """How a question cites ``text`` from message ``index``: as the log means it, never
        in the JSON escaping a rendered call spells it with (a doubled backslash is one)."""
        return text

    def evidence(self, index: int | None, needle: str) -> Evidence | None:
        """Evidence quoting ``needle`` (as the message spells it) in region message ``index``."""
        found = self.spelled(index, needle)
        if found is None or index is None:
            return None
        quote = quote_around(self.texts[index], found)
        return Evidence(message_index=index, quote=quote) if quote else None

    def cite(
        self, index: int | None, text: str, limit: int = MAX_FACT
    ) -> tuple[str, Evidence] | None:
        """(fact text, evidence) for ``text`` in message ``index``: the fact as the log means
        it (decoded: what a right answer says), the evidence in the message's spelling."""
        if self.spelled(index, text) is None:
            return None
        fact = text if len(text) <= limit else clip(text, limit)
        evidence = self.evidence(index, fact)
        return (fact, evidence) if fact and evidence else None

    def holds(self, index: int, text: str) -> bool:
        """Whether message ``index`` states ``text``, as written or JSON-escaped."""
        return spelled(text, self.texts[index]) is not None


def without_summaries(transcript: Transcript) -> Transcript:
    """``transcript`` with the content of every summary already in the log emptied (message
    indices unchanged); the transcript itself when it holds none."""
    if not any(m.summary for m in transcript.messages):
        return transcript
    messages = [
        m.model_copy(update={"content": ""}) if m.summary else m for m in transcript.messages
    ]
    return transcript.model_copy(update={"messages": messages})


def without_prelude(transcript: Transcript, start: int) -> Transcript:
    """``transcript`` with the content of its prelude messages from ``start`` on emptied
    (message indices unchanged); the transcript itself when the prelude ends before."""
    end = prelude_end(transcript.messages)
    if end <= start:
        return transcript
    messages = [
        m.model_copy(update={"content": ""}) if start <= i < end else m
        for i, m in enumerate(transcript.messages)
    ]
    return transcript.model_copy(update={"messages": messages})
