"""The summarizer interface: what a summarizing policy may hand to a summarizer.

A summarizer sees only the messages being compacted (region scoping), the
policy's own earlier summary and the section headings to fill. It never
receives the protected head or tail, the probes or the policy's name, so an
LLM summarizer cannot leak them and an offline one cannot be tuned to them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from benchmark.transcript.models import Message


class SummaryRequest(BaseModel):
    """Everything a summarizer is allowed to see."""

    model_config = ConfigDict(frozen=True)

    region: list[Message] = Field(description="only the messages being compacted")
    previous_summary: str | None = Field(None, description="the policy's own earlier summary")
    sections: list[str] = Field(min_length=1, description="headings to fill, in order")
    max_tokens: int = Field(gt=0, description="budget of the summary text (cl100k tokens)")


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, request: SummaryRequest) -> str: ...
