"""Settings of the judge audit (``+audit=judge``, ``conf/audit/judge.yaml``)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from benchmark.validators import distinct_choices

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


class AuditConfig(BaseModel):
    """What the audit generates and how often it asks the judge.

    The sessions are generated as ``transcript=synthetic`` does, with their own
    small size and window so a default audit stays around forty probes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["judge"] = "judge"
    sessions: int = Field(2, gt=0, description="generated sessions")
    target_tokens: int = Field(40_000, gt=1000, description="length of each generated session")
    seed: int = Field(0, description="session generation and the variants' choices")
    context_window: int = Field(16_000, gt=0, description="compaction window for the audit")
    tail_tokens: int = Field(2_500, ge=0, description="protected tail at each point")
    points: int = Field(2, gt=0, description="first compaction points used per session")
    per_type: int = Field(3, gt=0, description="probes per type per point")
    variants: list[Variant] = Field(default_factory=lambda: list(VARIANTS))
    samples: int = Field(3, gt=0, description="separate judge requests per item (consistency)")
    padding_tokens: int = Field(300, gt=0, description="filler added to the full answer")

    @field_validator("variants")
    @classmethod
    def _variants(cls, variants: list[Variant]) -> list[Variant]:
        return distinct_choices(variants, VARIANTS)
