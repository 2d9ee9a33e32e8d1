"""Probe extraction settings (the ``probe`` Hydra group)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from benchmark.config.instantiate import by_target, options, settings
from benchmark.config.validators import Seed, Tokens, distinct_choices
from benchmark.probe.models import PROBE_TYPES, SEED_TYPES, ProbeType


class ProbeConfig(BaseModel):
    """Which probe types to ask, how many per type and point, and the selection seed."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    types: list[ProbeType] = Field(
        default_factory=lambda: list(SEED_TYPES), description="probe types asked at each point"
    )
    per_type: int = Field(
        8, gt=0, le=10_000, description="max probes per type per compaction point"
    )
    seed: Seed = Field(0, description="drives the stratified pick when candidates exceed per_type")
    writer: dict[str, Any] | None = Field(
        None,
        description="None = the deterministic extractor; else a Hydra spec of an LLM probe "
        "writer ({_target_: benchmark.probe.writer.LLMProbeWriter, endpoint: {...}})",
    )

    @field_validator("types")
    @classmethod
    def _types(cls, types: list[ProbeType]) -> list[ProbeType]:
        return distinct_choices(types, PROBE_TYPES)

    @field_validator("writer")
    @classmethod
    def _writer(cls, writer: dict[str, Any] | None) -> dict[str, Any] | None:
        if writer is not None and not isinstance(writer.get("_target_"), str):
            raise ValueError("probe.writer needs a '_target_' (e.g. an LLMProbeWriter)")
        return writer

    def key_data(self) -> dict[str, Any]:
        """The settings that key cached probes; without a writer, exactly the original three."""
        data = self.model_dump(mode="json")
        if self.writer is None:
            data.pop("writer")
        return data


WRITERS = by_target(
    settings(
        "benchmark.probe.writer.LLMProbeWriter",
        ("ledger", "cache"),
        endpoint=dict[str, Any],  # checked with every endpoint (config_checks)
        max_region_tokens=Tokens,
    )
)


def check_writer(config: ProbeConfig) -> None:
    """``probe.writer``'s options against its target's settings, before it is built."""
    if config.writer is not None:
        options("probe.writer", "probe.writer", config.writer, WRITERS)
