"""Where a session compacts, and what each compaction sees.

A transcript is replayed against a context window. When the live context
passes ``trigger_ratio * context_window`` tokens, a compaction point occurs:
the context so far splits into a protected head (``head_messages``: by
default ``auto``, the leading system/developer messages, the user messages the
agent's harness injects and the first real user request; or a number of first
messages), a protected tail (the most recent messages within
``tail_tokens``), and the region between them, which compaction removes.
After a point the live context is taken to be head + tail, and the replay
continues to the next trigger. Each point is evaluated independently on the
prefix of the session up to it, so later regions include earlier ones.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema, model_validator

from benchmark.config.validators import MAX_TOKENS
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.prelude import task_head_end

MAX_HEAD_MESSAGES = 1_000_000


def _head_messages(value: Any) -> int | Literal["auto"]:
    """``auto`` or a count; one validator, so an error names the key and not a union branch."""
    if value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be 'auto' or a number of messages (got {value!r})")
    if not 0 <= value <= MAX_HEAD_MESSAGES:
        raise ValueError(f"must be >= 0 and <= {MAX_HEAD_MESSAGES:,} (got {value})")
    return value


HeadMessages = Annotated[
    int | Literal["auto"],
    PlainValidator(_head_messages),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0}, {"const": "auto"}]}),
]


class CompactionConfig(BaseModel):
    """Where a session compacts: the window it is replayed against, and what is protected."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    context_window: int = Field(
        200_000, gt=0, le=MAX_TOKENS, description="tokens the session is replayed against"
    )
    trigger_ratio: float = Field(
        0.8, gt=0, le=1, description="compact when the live context passes this share of it"
    )
    head_messages: HeadMessages = Field(
        "auto",
        description="protected first messages: auto = system/developer prelude, harness-injected "
        "user messages and the first real user request; or a number of messages",
    )
    tail_tokens: int = Field(
        20_000, ge=0, le=MAX_TOKENS, description="token budget of the protected tail"
    )
    points: Literal["all", "last"] = Field(
        "all", description="evaluate every compaction point, or only the last"
    )
    replay: Literal["iterative", "independent"] = Field(
        "iterative",
        description="iterative: each compaction sees the previous compacted context plus the "
        "messages since; independent: each sees the raw session prefix",
    )

    @model_validator(mode="after")
    def _tail_fits(self) -> CompactionConfig:
        if self.tail_tokens >= self.context_window * self.trigger_ratio:
            raise ValueError("compaction.tail_tokens must be below context_window * trigger_ratio")
        return self


class CompactionPoint(BaseModel):
    """Message indices of one compaction: head ``[0, head_end)``, region
    ``[head_end, tail_start)``, tail ``[tail_start, end)``."""

    model_config = ConfigDict(frozen=True)

    transcript_id: str
    ordinal: int
    head_end: int
    tail_start: int
    end: int
    tokens_before: int


class Segments(BaseModel):
    """What a policy is given at one point. ``region_offset`` is the region's
    first position in the context the segments were cut from."""

    model_config = ConfigDict(frozen=True)

    head: list[Message]
    region: list[Message]
    tail: list[Message]
    region_offset: int

    @property
    def messages(self) -> list[Message]:
        return [*self.head, *self.region, *self.tail]


def protected_head_end(messages: list[Message], config: CompactionConfig) -> int:
    """Index after the protected head of ``messages``."""
    if config.head_messages == "auto":
        return task_head_end(messages)
    return min(config.head_messages, len(messages))


def head_warning(transcript: Transcript, config: CompactionConfig) -> str | None:
    """Why (nearly) every message compacts, when the protected head leaves the replay no room;
    else None.

    When the head alone, or the head plus a full tail, passes the trigger, the
    context passes it again right after each compaction: the session compacts
    before each model call and its points measure the window more than the
    policy. A job says so once per file; a head that is merely big says nothing.
    """
    counts = transcript.message_tokens[: protected_head_end(transcript.messages, config)]
    tokens, trigger = sum(counts), config.context_window * config.trigger_ratio
    with_tail = tokens + config.tail_tokens
    if with_tail <= trigger:
        return None
    size = f"({len(counts)} message(s), {tokens:,} tokens; "
    size += f"compaction.head_messages={config.head_messages})"
    setting = (
        f"the compaction trigger ({trigger:,.0f} tokens = compaction.context_window "
        f"{config.context_window:,} x trigger_ratio {config.trigger_ratio:g})"
    )
    if tokens > trigger:
        why, need = f"the protected head alone {size} passes {setting}", tokens
    else:
        why = f"the protected head {size} plus compaction.tail_tokens={config.tail_tokens:,} "
        why += f"passes {setting}"
        need = with_tail
    often = "every" if tokens > trigger else "nearly every"
    return (
        f"{why}, so it compacts at {often} message; raise compaction.context_window above "
        f"{math.ceil(need / config.trigger_ratio):,}"
        + ("" if tokens > trigger else " or lower compaction.tail_tokens")
        + " or set a smaller compaction.head_messages"
    )


def find_points(transcript: Transcript, config: CompactionConfig) -> list[CompactionPoint]:
    """Replay ``transcript`` and return its compaction points (each compacts at least one
    message the previous point did not)."""
    counts = transcript.message_tokens
    trigger = config.context_window * config.trigger_ratio
    head_end = protected_head_end(transcript.messages, config)
    head_tokens = sum(counts[:head_end])
    points: list[CompactionPoint] = []
    live = head_tokens  # tokens in the live context
    live_start = head_end  # first non-head message in the live context
    end = head_end
    while end < len(counts):
        end += 1
        live += counts[end - 1]
        if live <= trigger:
            continue
        # Agents compact before the next model call, once pending tool results are in.
        while end < len(counts) and transcript.messages[end].role == "tool":
            live += counts[end]
            end += 1
        tail_start = _tail_start(transcript.messages, counts, head_end, end, config.tail_tokens)
        # A point compacts something new: when the head alone passes the trigger, the
        # live context re-triggers on every message, but a region already compacted at
        # the previous point would only be evaluated twice.
        if tail_start > max(head_end, live_start):
            points.append(
                CompactionPoint(
                    transcript_id=transcript.id,
                    ordinal=len(points),
                    head_end=head_end,
                    tail_start=tail_start,
                    end=end,
                    tokens_before=head_tokens + sum(counts[head_end:end]),
                )
            )
        live_start = tail_start
        live = head_tokens + sum(counts[live_start:end])
    if config.points == "last" and points:
        points = [points[-1].model_copy(update={"ordinal": 0})]
    return points


def _tail_start(
    messages: list[Message], counts: list[int], head_end: int, end: int, budget: int
) -> int:
    """First index of the most recent messages that fit in ``budget`` tokens.

    Never splits a tool call from its result: the tail does not start on a
    ``tool`` message.
    """
    start, used = end, 0
    while start > head_end and used + counts[start - 1] <= budget:
        start -= 1
        used += counts[start]
    while start < end and messages[start].role == "tool":
        start += 1
    return start


def split_live(live: list[Message], config: CompactionConfig, head_end: int) -> Segments:
    """Head, region and tail of a live context (iterative replay).

    The live context is the previous compaction's output plus the messages
    since, so the region holds the earlier summary (or index, or masked turns)
    rather than the raw history it replaced. Policies keep the head as is, so
    it is the session's head (``head_end`` messages, as at the point).
    """
    head_end = min(head_end, len(live))
    counts = [m.tokens for m in live]
    tail_start = _tail_start(live, counts, head_end, len(live), config.tail_tokens)
    return Segments(
        head=live[:head_end],
        region=live[head_end:tail_start],
        tail=live[tail_start:],
        region_offset=head_end,
    )


def segments(transcript: Transcript, point: CompactionPoint) -> Segments:
    msgs = transcript.messages
    return Segments(
        head=msgs[: point.head_end],
        region=msgs[point.head_end : point.tail_start],
        tail=msgs[point.tail_start : point.end],
        region_offset=point.head_end,
    )
