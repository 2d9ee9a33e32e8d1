"""Settings of the judge audit (``+audit=judge``, ``conf/audit/judge.yaml``)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from benchmark.config.validators import MAX_COUNT, MAX_TOKENS, Seed, distinct_choices
from benchmark.transcript.config import MAX_GENERATED_SESSIONS, MAX_GENERATED_TOKENS

Variant = Literal[
    "full",
    "partial",
    "none",
    "wrong",
    "abstain",
    "padded",
    "paraphrase",
    "extra_wrong",
    "near_miss",
    "confident_wrong",
]
VARIANTS: tuple[Variant, ...] = get_args(Variant)
# Judge requests multiply: items (points x per_type x variants) x samples.
MAX_AUDIT_ITEMS = 10_000
MAX_SAMPLES = 100  # consistency is measured by a handful of repeats


class AuditConfig(BaseModel):
    """What the audit generates and how often it asks the judge.

    The sessions are generated as ``transcript=synthetic`` does, with their own
    small size and window so a default audit stays around forty probes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["judge"] = Field("judge", description="what is audited: the judge")
    sessions: int = Field(2, gt=0, le=MAX_GENERATED_SESSIONS, description="generated sessions")
    target_tokens: int = Field(
        40_000, gt=1000, le=MAX_GENERATED_TOKENS, description="length of each generated session"
    )
    seed: Seed = Field(0, description="session generation and the variants' choices")
    context_window: int = Field(
        16_000, gt=0, le=MAX_TOKENS, description="compaction window for the audit"
    )
    tail_tokens: int = Field(2_500, ge=0, le=MAX_TOKENS, description="protected tail at each point")
    points: int = Field(
        2, gt=0, le=MAX_AUDIT_ITEMS, description="first compaction points used per session"
    )
    per_type: int = Field(3, gt=0, le=MAX_AUDIT_ITEMS, description="probes per type per point")
    variants: list[Variant] = Field(
        default_factory=lambda: list(VARIANTS), description="answer variants written per probe"
    )
    samples: int = Field(
        3, gt=0, le=MAX_SAMPLES, description="separate judge requests per item (consistency)"
    )
    padding_tokens: int = Field(
        300, gt=0, le=MAX_COUNT, description="filler added to the full answer"
    )

    @field_validator("variants")
    @classmethod
    def _variants(cls, variants: list[Variant]) -> list[Variant]:
        return distinct_choices(variants, VARIANTS)
