"""Probes: questions about the compacted region, with structured gold and evidence."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmark.activity.next_step import NextStep

ProbeType = Literal["recall", "artifact", "continuation", "decision", "next_action"]
PROBE_TYPES: tuple[ProbeType, ...] = (
    "recall",
    "artifact",
    "continuation",
    "decision",
    "next_action",
)
# The four types of the evaluation framework: what ``probe.types`` asks by default.
SEED_TYPES: tuple[ProbeType, ...] = ("recall", "artifact", "continuation", "decision")

FactKind = Literal[
    "identifier",  # exact token: path, version, error code, command, SHA, URL
    "detail",  # a phrase that a correct answer contains (error text, value)
    "created",  # a file created in the region
    "modified",  # a file modified in the region
    "read",  # a file only read/examined in the region
    "pending",  # a task still open at the compaction point
    "choice",  # what was decided
    "rationale",  # why it was decided
    "alternative",  # an option considered and rejected
]


class Fact(BaseModel):
    """One atomic piece of the gold answer. ``text`` occurs verbatim in the transcript."""

    model_config = ConfigDict(frozen=True)

    kind: FactKind
    text: str = Field(min_length=1)


class Gold(BaseModel):
    model_config = ConfigDict(frozen=True)

    answer: str = Field(description="the gold answer as prose, for humans and LLM judges")
    facts: list[Fact] = Field(min_length=1)
    action: NextStep | None = Field(
        None, description="a next-action probe's gold: the step the log takes after the point"
    )

    def of_kind(self, *kinds: FactKind) -> list[Fact]:
        return [f for f in self.facts if f.kind in kinds]


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    message_index: int = Field(ge=0, description="index in the transcript's messages")
    quote: str = Field(min_length=1, description="verbatim substring of that message's text")


class Probe(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str = Field(description="stable id: transcript, point, type and ordinal")
    type: ProbeType
    question: str
    gold: Gold
    evidence: list[Evidence] = Field(min_length=1)
    transcript_id: str
    point: int = Field(ge=0, description="ordinal of the compaction point")
    position: float = Field(
        ge=0, le=1, description="where in the region the evidence sits (0 = start, 1 = end)"
    )
