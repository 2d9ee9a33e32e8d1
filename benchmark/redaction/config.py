"""The ``redaction`` settings: which detectors run, and the user's own patterns."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from benchmark.redaction.detectors import BUILTIN_NAMES
from benchmark.redaction.user_patterns import compile_pattern


def _regex(value: str) -> str:
    compile_pattern("user_pattern", value)  # the error's key names the pattern
    return value


def _type_names(value: dict[str, str]) -> dict[str, str]:
    for name in value:
        compile_pattern(name, "x")
    return value


class RedactionConfig(BaseModel):
    """Credentials in transcripts replaced by typed placeholders as they load
    (``benchmark.redaction``), so nothing downstream ever sees the secret."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    enabled: bool = Field(True, description="false: transcripts are not redacted")
    builtin: Literal["all"] | list[str] = Field(
        "all", description="which built-in detectors run: all, or a list of their names"
    )
    patterns: Annotated[
        dict[str, Annotated[str, AfterValidator(_regex)]], AfterValidator(_type_names)
    ] = Field(
        default_factory=dict,
        description="extra detectors: type name -> regex (a group named s: only that part)",
    )

    @field_validator("builtin")
    @classmethod
    def _known_detectors(cls, value: str | list[str]) -> str | list[str]:
        for name in [] if value == "all" else value:
            if name not in BUILTIN_NAMES:
                raise ValueError(
                    f"unknown detector {name!r} (choose from: all, {', '.join(BUILTIN_NAMES)})"
                )
        return value
