"""Deterministic probe extraction: questions about one compaction point's region.

Each probe type has its own extractor (``recall``, ``artifact``,
``continuation``, ``decision``; for sessions of API tools and a customer,
:mod:`benchmark.probe.tool_facts` adds to the first three) producing
candidates; this module checks them (evidence verbatim and inside the region,
facts backed by evidence, no gold in the question), removes duplicate
questions, picks at most ``per_type`` per type stratified over the region's
positions, and numbers them stably. A ``next_action`` probe (at most one per
point, its evidence past the region) is made and checked by
:mod:`benchmark.probe.next_action`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmark.probe.artifact import artifact_candidates
from benchmark.probe.candidate import Candidate, View
from benchmark.probe.config import ProbeConfig
from benchmark.probe.continuation import continuation_candidates
from benchmark.probe.decision import decision_candidates
from benchmark.probe.models import PROBE_TYPES, Evidence, Fact, Gold, Probe, ProbeType
from benchmark.probe.next_action import next_action
from benchmark.probe.recall import recall_candidates
from benchmark.probe.tool_facts import (
    tool_artifact_candidates,
    tool_continuation_candidates,
    tool_recall_candidates,
)
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.models import Transcript

# Bump when extraction changes what it produces: it keys the probe cache.
EXTRACTOR_VERSION = "14"


def _both(*extractors: Callable[[View], list[Candidate]]) -> Callable[[View], list[Candidate]]:
    """One type's candidates from several extractors, in order (a coding session's first,
    then those of API tools and a customer: :mod:`benchmark.probe.tool_facts`)."""
    return lambda view: [c for extractor in extractors for c in extractor(view)]


EXTRACTORS: dict[ProbeType, Callable[[View], list[Candidate]]] = {
    "recall": _both(recall_candidates, tool_recall_candidates),
    "artifact": _both(artifact_candidates, tool_artifact_candidates),
    "continuation": _both(continuation_candidates, tool_continuation_candidates),
    "decision": decision_candidates,
}


def generate_probes(
    transcript: Transcript, point: CompactionPoint, config: ProbeConfig
) -> list[Probe]:
    """Probes about ``point``'s region (messages ``[head_end, tail_start)``).

    Messages of the tail (up to ``point.end``) only inform the state at the
    point (a task checked off later, a test fixed later); nothing before the
    region or past ``point.end`` is read, except by the next-action probe (its
    gold is the step after the point, its vocabulary the session's tools).
    """
    view = View.of(transcript, point)
    if view.stop <= view.start:
        return []
    probes: list[Probe] = []
    asked: set[str] = set()
    for ptype in (t for t in PROBE_TYPES if t in config.types and t in EXTRACTORS):
        candidates = []
        for raw in EXTRACTORS[ptype](view):
            candidate = _checked(view, raw)
            key = _question_key(candidate.question) if candidate else ""
            if candidate is not None and key not in asked:
                asked.add(key)
                candidates.append(candidate)
        rng = random.Random(f"{config.seed}:{point.head_end}:{point.tail_start}:{ptype}")
        chosen = select(candidates, config.per_type, view, rng)
        chosen.sort(key=lambda c: (c.anchor, c.question))
        for n, candidate in enumerate(chosen):
            probes.append(to_probe(transcript, point, view, candidate, n))
    return probes + next_action_probes(transcript, point, config)


def next_action_probes(
    transcript: Transcript, point: CompactionPoint, config: ProbeConfig
) -> list[Probe]:
    """The point's next-action probe when ``probe.types`` asks for it (none when skipped)."""
    if "next_action" not in config.types or config.per_type <= 0:
        return []
    found = next_action(transcript, point)
    return [found] if isinstance(found, Probe) else []


def why_no_probes(
    transcript: Transcript, points: list[CompactionPoint], config: ProbeConfig
) -> str:
    """One line: ``N compaction point(s) but no probe (reason)``, with what the regions hold.

    Points find regions, probes need something in them to ask about; saying which
    is missing (the regions are tiny, hold no tool call, or nothing extractable)
    points at the fix (a larger window, other probe types, another log).
    """
    regions = [range(p.head_end, p.tail_start) for p in points]
    largest = max(regions, key=len, default=range(0))
    msgs = [transcript.messages[i] for i in largest]
    tokens = sum(m.tokens for m in msgs)
    calls = sum(len(m.tool_calls or []) for m in msgs)
    said = sum(1 for m in msgs if m.role == "assistant" and (m.content or "").strip())
    holds = (
        f"the largest region holds {len(msgs)} message(s), {tokens:,} tokens, "
        f"{calls} tool call(s), {said} assistant message(s) with text"
    )
    if len(msgs) <= 1:
        reason = f"regions too small: {holds}"
    elif not calls and not said:
        reason = f"no tool calls and no assistant text in the regions: {holds}"
    else:
        reason = f"nothing extractable: {holds}"
    if set(config.types) != set(PROBE_TYPES):
        reason += f"; probe.types={list(config.types)}"
    return f"{len(points)} compaction point(s) but no probe ({reason})"


def select(candidates: list[Candidate], k: int, view: View, rng: random.Random) -> list[Candidate]:
    """At most ``k`` candidates: priority ones first, then one per position stratum.

    The region is cut into as many equal strata as there are free slots; each
    round draws one candidate (seeded) from every stratum that still has some,
    so the start, middle and end of the region are all asked about.
    """
    chosen = [c for c in candidates if c.priority][:k]
    rest = sorted((c for c in candidates if not c.priority), key=lambda c: (c.anchor, c.question))
    slots = k - len(chosen)
    if len(rest) <= slots:
        return chosen + rest
    if slots <= 0:
        return chosen
    strata: list[list[Candidate]] = [[] for _ in range(slots)]
    for c in rest:
        strata[min(slots - 1, int(position(view, c.anchor) * slots))].append(c)
    while slots > 0:
        for stratum in strata:
            if stratum and slots > 0:
                chosen.append(stratum.pop(rng.randrange(len(stratum))))
                slots -= 1
    return chosen


def position(view: View, index: int) -> float:
    """Where message ``index`` sits in the region: 0 = first message, 1 = last."""
    span = max(1, view.stop - view.start - 1)
    return min(1.0, max(0.0, (index - view.start) / span))


def _checked(view: View, c: Candidate) -> Candidate | None:
    """The candidate with only verifiable parts, or ``None`` when nothing verifiable is left."""
    evidence: list[Evidence] = []
    for ev in c.evidence:
        inside = view.in_region(ev.message_index) and ev.quote in view.texts[ev.message_index]
        if inside and ev not in evidence:
            evidence.append(ev)
    question = c.question.lower()
    facts: list[Fact] = []
    for fact in c.facts:
        text = fact.text
        if not text.strip() or text.lower() in question or fact in facts:
            continue
        if any(view.holds(ev.message_index, text) for ev in evidence):
            facts.append(fact)
    if not evidence or not facts:
        return None
    used = [ev for ev in evidence if any(view.holds(ev.message_index, f.text) for f in facts)]
    return Candidate(
        c.type, c.question, c.answer, tuple(facts), tuple(used or evidence), c.anchor, c.priority
    )


def _question_key(question: str) -> str:
    return " ".join(question.lower().split())


def to_probe(
    transcript: Transcript, point: CompactionPoint, view: View, c: Candidate, n: int
) -> Probe:
    return Probe(
        id=f"{transcript.id}/p{point.ordinal}/{c.type}/{n}",
        type=c.type,
        question=c.question,
        gold=Gold(answer=c.answer, facts=list(c.facts)),
        evidence=list(c.evidence),
        transcript_id=transcript.id,
        point=point.ordinal,
        position=position(view, c.anchor),
    )
