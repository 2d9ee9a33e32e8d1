"""The transcript model: OpenAI chat format, validated at the boundary."""

from __future__ import annotations

import contextlib
import hashlib
import json
from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchmark.text import tokens

Role = Literal["system", "user", "assistant", "tool"]


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> str:
        # The wire format carries arguments as a JSON string; some logs store an object.
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)

    def args(self) -> dict[str, Any]:
        """Arguments as a dict; ``{"_raw": text}`` when they are not a JSON object."""
        try:
            parsed = json.loads(self.arguments)
        except json.JSONDecodeError:
            return {"_raw": self.arguments}
        if isinstance(parsed, str) and parsed.lstrip().startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):  # encoded twice (some logs)
                parsed = json.loads(parsed)
        return parsed if isinstance(parsed, dict) else {"_raw": parsed}


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


# What a model is shown in place of a provider-encrypted item: neutral on purpose (no method name).
COMPACTED_PLACEHOLDER = (
    "[An earlier part of this session was compacted by the model provider into an encrypted "
    "item; its content cannot be displayed here.]"
)


class OpaqueItem(BaseModel):
    """A provider's server-side compaction of earlier messages, kept only as ciphertext.

    Only the provider that made it can read it, so it travels with where it
    came from (``provider``: the endpoint's normalised base URL, ``"default"``
    for the SDK's own) and the model that made it. ``tokens`` is the size the
    provider reported for it, since its text cannot be counted here.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    encrypted_content: str = Field(min_length=1)
    item_id: str | None = None
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    tokens: int = Field(ge=0)


class _Derived(BaseModel):
    """A frozen model whose ``cached_property`` values are dropped by ``model_copy``.

    Pydantic copies the instance ``__dict__``, cached values included; an
    updated copy must recompute them (token counts, content hashes).
    """

    _derived: ClassVar[tuple[str, ...]] = ()

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False):  # type: ignore[override]
        copy = super().model_copy(update=update, deep=deep)
        for name in self._derived:
            copy.__dict__.pop(name, None)
        return copy


class Message(_Derived):
    """One chat message. ``content`` parts (``[{"type": "text", ...}]``) are joined to text."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    _derived: ClassVar[tuple[str, ...]] = ("tokens",)

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    compaction: OpaqueItem | None = Field(
        None, description="set on the stand-in for server-side compacted messages (no content)"
    )
    summary: bool | None = Field(
        None,
        description="true on a summary of earlier messages that was already in the log (the "
        "agent's own compaction): lossy, so never a source of probes. Unset otherwise, so a log "
        "without summaries hashes as it did before the field existed",
    )

    @field_validator("content", mode="before")
    @classmethod
    def _join_parts(cls, value: Any) -> Any:
        if isinstance(value, list):
            texts = []
            for part in value:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, str):
                    texts.append(part)
                else:
                    raise ValueError(
                        "content parts must be text parts ({'type': 'text', 'text': ...})"
                    )
            return "\n".join(texts)
        return value

    @field_validator("summary", mode="after")
    @classmethod
    def _unset_unless_true(cls, value: bool | None) -> bool | None:
        return True if value else None  # False and None dump (and hash) alike: not at all

    @model_validator(mode="after")
    def _role_fields(self) -> Message:
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs 'tool_call_id'")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages may carry 'tool_calls'")
        if self.compaction is not None and (
            self.role != "user" or self.content is not None or self.tool_calls
        ):
            raise ValueError("a message with 'compaction' must be a user message with no content")
        return self

    def render(self) -> str:
        """Plain text of the message as a model would read it (content + tool calls).

        An encrypted compaction item has no readable text: a fixed placeholder stands in.
        """
        if self.compaction is not None:
            return COMPACTED_PLACEHOLDER
        parts = [self.content] if self.content else []
        for call in self.tool_calls or []:
            parts.append(f"[tool call {call.function.name}] {call.function.arguments}")
        return "\n".join(parts)

    @cached_property
    def tokens(self) -> int:
        if self.compaction is not None:
            return self.compaction.tokens + tokens.MESSAGE_OVERHEAD
        return tokens.count(self.render()) + tokens.MESSAGE_OVERHEAD


class PlantedFact(BaseModel):
    """A fact the synthetic generator planted, with where it lives (ground truth)."""

    kind: str = Field(description="e.g. error, command, version, file_created, decision, pending")
    key: str = Field(description="what the fact is about (a command, a package, a path, a topic)")
    value: str = Field(description="the exact planted value")
    message_index: int
    details: dict[str, Any] = Field(default_factory=dict)


class Transcript(_Derived):
    model_config = ConfigDict(frozen=True)
    _derived: ClassVar[tuple[str, ...]] = ("content_hash", "message_tokens")

    id: str
    source: str = Field(description="file path, or 'synthetic:seed=N' for generated sessions")
    messages: list[Message]
    ground_truth: list[PlantedFact] = Field(default_factory=list)

    @cached_property
    def content_hash(self) -> str:
        """Hash of the messages only: the cache key does not depend on where a file lives."""
        payload = json.dumps(
            [m.model_dump(exclude_none=True) for m in self.messages], sort_keys=True
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def summaries(self) -> list[int]:
        """Indices of the summaries already in the log (``Message.summary``)."""
        return [i for i, m in enumerate(self.messages) if m.summary]

    @cached_property
    def message_tokens(self) -> list[int]:
        # Messages counted already (the generator counts as it writes) are not counted again.
        todo = [m for m in self.messages if "tokens" not in m.__dict__ and m.compaction is None]
        counts = tokens.count_many([m.render() for m in todo])
        for m, c in zip(todo, counts, strict=True):
            m.__dict__["tokens"] = c + tokens.MESSAGE_OVERHEAD  # what Message.tokens gives
        # An encrypted item's size is the provider's count, not its placeholder's.
        return [m.tokens for m in self.messages]

    @property
    def total_tokens(self) -> int:
        return sum(self.message_tokens)
