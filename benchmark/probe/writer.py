"""The LLM probe writer: a model writes probes about a region; we keep only verifiable ones.

A model can phrase richer questions than the regex extractor, but it can also
invent quotes and facts. So every probe it writes is checked against the
region exactly as the extractor's candidates are: the evidence quote and every
fact must occur verbatim in a region message, and the question must not give
a fact away. What fails is dropped and counted (``WriterResult.dropped`` and
the writer's running ``dropped`` total), so a run can report how much of the
model's output was unusable.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from benchmark.config.instantiate import instantiate_target
from benchmark.errors import UserError
from benchmark.llm import UsageLedger
from benchmark.llm.budget import chat_tokens
from benchmark.llm.connect import RegionStage
from benchmark.llm.json_reply import extract_json
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.usage import CallPurpose
from benchmark.probe.candidate import Candidate, View
from benchmark.probe.config import WRITERS, ProbeConfig
from benchmark.probe.extract import to_probe
from benchmark.probe.models import PROBE_TYPES, Evidence, Fact, FactKind, Probe, ProbeType
from benchmark.probe.text import quote_around
from benchmark.probe.writer_prompts import (
    PROMPT_VERSION,
    render_region,
    reply_schema,
    writer_messages,
)
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.models import Message, Transcript

# A message shown to the writer under a tight window gets at least this many tokens.
_MIN_SHOWN_TOKENS = 64
_FACT_KINDS: frozenset[str] = frozenset(get_args(FactKind))


@dataclass
class WriterResult:
    """Verified candidates of one ``write`` call and what was thrown away.

    ``dropped`` counts probes that failed verification (by reason in
    ``reasons``); ``capped`` counts valid probes beyond ``per_type``, and
    ``facts_dropped`` single facts removed from probes that were kept or dropped.
    """

    candidates: list[Candidate] = field(default_factory=list)
    dropped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    capped: int = 0
    facts_dropped: int = 0

    def drop(self, reason: str) -> None:
        self.dropped += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def parse_reply(text: str) -> list[Any]:
    """The ``probes`` list of a reply; ``ValueError`` (so the client asks again) otherwise."""
    data = extract_json(text)
    items = data.get("probes")
    if not isinstance(items, list):
        raise ValueError("reply has no 'probes' list")
    return items


def check(
    items: Sequence[Any],
    texts: Sequence[str],
    offset: int,
    types: Sequence[ProbeType],
    per_type: int,
) -> WriterResult:
    """Keep the verifiable probes of ``items``, in reply order, at most ``per_type`` per type.

    ``texts`` are the rendered region messages; indices in ``items`` are relative
    to them and come out absolute (``offset`` + index).
    """
    result = WriterResult()
    asked: set[str] = set()
    per: dict[str, int] = {}
    for item in items:
        reason, candidate = _verify(item, texts, offset, types, result)
        if candidate is None:
            result.drop(reason)
            continue
        key = " ".join(candidate.question.lower().split())
        if key in asked:
            result.drop("duplicate")
            continue
        if per.get(candidate.type, 0) >= per_type:
            result.capped += 1
            continue
        asked.add(key)
        per[candidate.type] = per.get(candidate.type, 0) + 1
        result.candidates.append(candidate)
    return result


def _verify(
    item: Any, texts: Sequence[str], offset: int, types: Sequence[ProbeType], result: WriterResult
) -> tuple[str, Candidate | None]:
    """``("", candidate)`` for a probe that holds up, ``(reason, None)`` otherwise."""
    if not isinstance(item, dict):
        return "malformed", None
    ptype, question = item.get("type"), item.get("question")
    if ptype not in types:
        return "unrequested_type", None
    if not isinstance(question, str) or not question.strip():
        return "malformed", None
    question = question.strip()
    quote = item.get("evidence_quote")
    quote = quote.strip() if isinstance(quote, str) else ""
    where = _locate(quote, item.get("message_index"), texts) if quote else None
    if where is None:
        return "quote_not_found", None
    facts: list[Fact] = []
    raw_facts = item.get("facts")
    for raw in raw_facts if isinstance(raw_facts, list) else []:
        fact = _fact(raw)
        if fact is None or not any(fact.text in t for t in texts):
            result.facts_dropped += 1
        elif fact not in facts:
            facts.append(fact)
    if not facts:
        return "no_verified_facts", None
    lowered = question.lower()
    if any(f.text.lower() in lowered for f in facts):
        return "fact_in_question", None
    evidence = [Evidence(message_index=offset + where, quote=quote)]
    for fact in facts:
        if fact.text in texts[where]:
            continue
        i = next(i for i, t in enumerate(texts) if fact.text in t)
        quoted = quote_around(texts[i], fact.text) or fact.text
        ev = Evidence(message_index=offset + i, quote=quoted)
        if ev not in evidence:
            evidence.append(ev)
    answer = item.get("gold_answer")
    answer = answer.strip() if isinstance(answer, str) else ""
    return "", Candidate(
        type=ptype,
        question=question,
        answer=answer or "; ".join(f.text for f in facts),
        facts=tuple(facts),
        evidence=tuple(evidence),
        anchor=offset + where,
    )


def _locate(quote: str, index: Any, texts: Sequence[str]) -> int | None:
    """The named message when it holds ``quote``, else the first region message that does."""
    named = isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(texts)
    if named and quote in texts[index]:
        return index
    return next((i for i, t in enumerate(texts) if quote in t), None)


def _fact(raw: Any) -> Fact | None:
    """A fact from the reply; an unknown kind becomes ``detail`` (the text is what counts)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
        return None
    text = raw["text"].strip()
    if not text:
        return None
    kind = raw.get("kind")
    return Fact(kind=kind if kind in _FACT_KINDS else "detail", text=text)


class LLMProbeWriter(RegionStage):
    """Writes probes about one region with an LLM, one call for all requested types.

    ``dropped`` is the running total of dropped probes over every ``write`` (and
    every cache hit the cache reports back), for the pipeline to log.
    """

    ROLE = "probe_writer"
    REGION_TOKENS = 60000

    def _start(self) -> None:
        self.dropped = 0
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def spec(self) -> dict[str, Any]:
        """What the written probes depend on besides the region; part of the cache key."""
        return {
            "model": self.endpoint.model,
            "base_url": self.endpoint.base_url,
            "temperature": self.endpoint.temperature,
            "max_region_tokens": self.max_region_tokens,
            "prompt": PROMPT_VERSION,
            # A window (less the reply) clips the region shown; listed only when set, so
            # the keys of writers without one stay valid.
            **(
                {"context_window": w, "max_tokens": self.endpoint.max_tokens}
                if (w := self.endpoint.context_window)
                else {}
            ),
        }

    def write(
        self,
        region: Sequence[Message],
        region_offset: int,
        types: Sequence[ProbeType],
        per_type: int,
        purpose: CallPurpose | None = None,
    ) -> WriterResult:
        """Verified probe candidates about ``region``, evidence indices absolute;
        ``purpose`` (the point) is recorded with the call, for its trace."""
        ordered = [t for t in PROBE_TYPES if t in types]
        if not region or not ordered or per_type <= 0:
            return WriterResult()
        schema = reply_schema(ordered)
        messages, start = self.window.fit(
            self.max_region_tokens,
            lambda budget: _newest(region, budget, self.max_region_tokens),
            lambda shown: (writer_messages(shown[1], ordered, per_type), shown[0]),
            schema=schema,
            measure=lambda request: chat_tokens(request[0]),
        )
        raw: list[str] = []

        def parse(text: str) -> list[Any]:
            raw.append(text)
            return parse_reply(text)

        _, items = self.client.complete(messages, schema=schema, parse=parse, purpose=purpose)
        texts = [m.render() for m in region[start:]]
        result = check(items or [], texts, region_offset + start, ordered, per_type)
        self.add_dropped(result.dropped)
        with self._lock:
            self.records.append(
                {
                    "model": self.endpoint.model,
                    "region_offset": region_offset,
                    "raw_outputs": raw,
                    "kept": len(result.candidates),
                    "dropped": result.dropped,
                    "reasons": dict(result.reasons),
                    "capped": result.capped,
                }
            )
        return result

    def add_dropped(self, count: int) -> None:
        with self._lock:
            self.dropped += count


def _newest(region: Sequence[Message], budget: int, cap: int) -> tuple[int, list[dict[str, Any]]]:
    """(first message shown, the rendered messages) within ``budget`` tokens.

    Within ``max_region_tokens`` (``cap``) every message is shown, cut to a common
    length. A tighter budget (the endpoint's window) shows only the newest messages
    that get ``_MIN_SHOWN_TOKENS`` each: a window cannot hold hundreds of stubs.
    """
    start = 0
    if budget < cap:
        start = max(0, len(region) - max(1, budget // _MIN_SHOWN_TOKENS))
    return start, render_region(region[start:], budget)


def write_probes(
    transcript: Transcript, point: CompactionPoint, config: ProbeConfig, writer: LLMProbeWriter
) -> tuple[list[Probe], WriterResult]:
    """Probes about ``point``'s region written by ``writer``, numbered like the extractor's."""
    view = View.of(transcript, point)
    if view.stop <= view.start:
        return [], WriterResult()
    region = view.transcript.messages[view.start : view.stop]  # summaries emptied
    purpose = CallPurpose(transcript.id, point.ordinal)
    # Next-action probes stay extractive: their gold is the log's own step, not a region fact.
    asked = [t for t in config.types if t != "next_action"]
    result = writer.write(region, view.start, asked, config.per_type, purpose)
    probes: list[Probe] = []
    for ptype in (t for t in PROBE_TYPES if t in config.types):
        chosen = sorted(
            (c for c in result.candidates if c.type == ptype), key=lambda c: (c.anchor, c.question)
        )
        probes.extend(to_probe(transcript, point, view, c, n) for n, c in enumerate(chosen))
    return probes, result


def build_writer(
    config: ProbeConfig, ledger: UsageLedger | None = None, cache: ResponseCache | None = None
) -> LLMProbeWriter | None:
    """The writer ``probe.writer`` describes (``None`` = the deterministic extractor)."""
    if config.writer is None:
        return None
    shared = {"ledger": ledger, "cache": cache}
    writer = instantiate_target("probe.writer", "probe.writer", config.writer, WRITERS, shared)
    if not callable(getattr(writer, "write", None)) or not callable(getattr(writer, "spec", None)):
        raise UserError(f"probe.writer._target_ {config.writer['_target_']} is not a probe writer")
    return writer
