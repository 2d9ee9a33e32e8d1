"""Audit cases: (probe, answer variant) pairs with the score bands a correct judge gives.

Sessions are generated as ``transcript=synthetic`` generates them, probes are
extracted at their compaction points as a job extracts them, and the judge's
context is the session up to the point, uncompacted (what the ``none`` control
arm keeps): every gold fact is in it, so the expectation depends on the answer
alone and not on what some policy happened to keep.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchmark.audit.answers import build_variants
from benchmark.audit.config import AuditConfig
from benchmark.audit.expected import CRITERIA, expected_bands
from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.judge.matching import fabricated
from benchmark.probe.models import Probe
from benchmark.probe.set_cache import load_or_generate
from benchmark.probe.writer import LLMProbeWriter
from benchmark.redaction import redactor_for
from benchmark.rubric import JUDGE_FREE_TYPES
from benchmark.run.compaction import CompactionConfig, find_points, segments
from benchmark.scoring.abstention import is_abstention
from benchmark.text import tokens
from benchmark.transcript.config import SyntheticTranscripts
from benchmark.transcript.models import Message
from benchmark.transcript.sources import load_transcripts

ContextKey = tuple[str, int]  # (transcript id, point ordinal)


class Sample(BaseModel):
    """One judge request's outcome: scores, or the failure (counted, never scored)."""

    scores: dict[str, float] = Field(default_factory=dict)
    reasoning: dict[str, str] = Field(default_factory=dict)
    failed: bool = False
    error: str | None = None


class AuditItem(BaseModel):
    """One answer to one probe, its known content, its expected scores and the judge's."""

    model_config = ConfigDict(frozen=True)

    probe: Probe
    variant: str
    answer: str
    stated: list[int] = Field(description="indices of the gold facts the answer states")
    fabricated: list[str] = Field(description="identifiers the answer invents")
    answer_tokens: int
    expected: dict[str, str] = Field(
        description="criterion -> the band a correct judge's score lies in (expected.BANDS)"
    )
    samples: list[Sample] = Field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.probe.id}/{self.variant}"

    @property
    def context_key(self) -> ContextKey:
        return (self.probe.transcript_id, self.probe.point)


class AuditItems(BaseModel):
    """Everything the judge will be asked, plus the contexts it is asked about."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    items: list[AuditItem]
    contexts: dict[ContextKey, list[Message]]
    probes: int
    skipped: dict[str, int] = Field(description="variant -> probes it could not be built for")


def audit_compaction(config: BenchmarkConfig, audit: AuditConfig) -> CompactionConfig:
    data = {
        **config.compaction.model_dump(),
        "context_window": audit.context_window,
        "tail_tokens": audit.tail_tokens,
    }
    try:
        return CompactionConfig.model_validate(data)
    except ValidationError:
        limit = int(audit.context_window * config.compaction.trigger_ratio)
        raise UserError(
            f"config key 'audit.tail_tokens': must be below audit.context_window x "
            f"compaction.trigger_ratio = {limit} (got {audit.tail_tokens})"
        ) from None


def build_items(
    config: BenchmarkConfig, audit: AuditConfig, writer: LLMProbeWriter | None = None
) -> AuditItems:
    """Generate the sessions, extract the probes, build every variant and its expected bands."""
    unknown = sorted(set(config.rubric.judged_criteria) - CRITERIA)
    if unknown:
        raise UserError(
            f"rubric '{config.rubric.name}': the audit has no expectation for criteria {unknown}"
        )
    source = SyntheticTranscripts(
        kind="synthetic",
        name="synthetic",
        sessions=audit.sessions,
        seed=audit.seed,
        target_tokens=audit.target_tokens,
    )
    compaction = audit_compaction(config, audit)
    probe_config = config.probe.model_copy(update={"per_type": audit.per_type})
    items: list[AuditItem] = []
    contexts: dict[ContextKey, list[Message]] = {}
    skipped: dict[str, int] = {}
    probes = 0
    for transcript in load_transcripts(source, redactor_for(config), config.cache_path).transcripts:
        for point in find_points(transcript, compaction)[: audit.points]:
            context = segments(transcript, point).messages
            contexts[(transcript.id, point.ordinal)] = context
            found = load_or_generate(
                transcript, point, probe_config, config.cache_path, writer=writer
            )
            # A judge-free type (next_action) is scored by rule: no judge to audit on it.
            found = [p for p in found if p.type not in JUDGE_FREE_TYPES]
            probes += len(found)
            for probe in found:
                built = probe_items(probe, context, config, audit)
                items.extend(built[0])
                for variant in built[1]:
                    skipped[variant] = skipped.get(variant, 0) + 1
    if not items:
        raise UserError(
            "audit: no generated session reached a compaction point with probes; raise "
            "audit.target_tokens or lower audit.context_window"
        )
    return AuditItems(items=items, contexts=contexts, probes=probes, skipped=skipped)


def probe_items(
    probe: Probe, context: list[Message], config: BenchmarkConfig, audit: AuditConfig
) -> tuple[list[AuditItem], list[str]]:
    """The probe's items, and the variants that could not be built for it."""
    session = "\n".join(m.render() for m in context)
    variants = build_variants(probe, audit.variants, audit.seed, audit.padding_tokens, session)
    criteria = config.rubric.probe_criteria.get(probe.type, [])
    facts = probe.gold.facts
    items = []
    for variant, (answer, stated) in variants.answers.items():
        invented = fabricated(answer, probe.question, context, facts)
        length = 0 if is_abstention(answer) else tokens.count(answer)  # abstention: 0
        expected = expected_bands(criteria, variant, facts, stated)
        items.append(
            AuditItem(
                probe=probe,
                variant=variant,
                answer=answer,
                stated=list(stated),
                fabricated=invented,
                answer_tokens=length,
                expected=expected,
            )
        )
    return items, list(variants.skipped)
