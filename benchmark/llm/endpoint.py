"""An OpenAI-compatible endpoint: which model, where, which key, what it costs.

The key itself never appears in config, params, logs or artifacts: the config
names the environment variable that holds it (``api_key_env``).
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from benchmark.config.validators import MAX_PRICE, NO_ECHO, http_url_problem
from benchmark.errors import UserError

# How a structured reply is asked for, best first (benchmark.llm.structured_output: the ladder).
StructuredOutput = Literal[
    "json_schema",  # OpenAI response_format json_schema (also vLLM, Ollama, recent llama.cpp)
    "json_object_schema",  # JSON mode with the schema beside it (llama.cpp's server)
    "guided_json",  # vLLM before 0.12: the schema as a top-level guided_json
    "structured_outputs",  # vLLM 0.12 on: structured_outputs {"json": schema}
    "json_object",  # JSON mode, no schema
    "none",  # plain text, the schema in the system prompt
]
# Where an endpoint with no base_url goes (the SDK's default).
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def normalise_base_url(base_url: str | None) -> str:
    """``None`` means the SDK default; surrounding space and a trailing slash change nothing."""
    return (base_url or DEFAULT_BASE_URL).strip().rstrip("/") or DEFAULT_BASE_URL


_SLOTS: dict[tuple[str, str, int], asyncio.Semaphore] = {}  # per endpoint, on the LLM loop


def endpoint_slot(endpoint: Endpoint) -> asyncio.Semaphore:
    """The endpoint's concurrency limit (``max_concurrency``), one for every client of the
    same base URL, model and limit."""
    limit = endpoint.max_concurrency
    ident = (normalise_base_url(endpoint.base_url), endpoint.model, limit)
    slot = _SLOTS.get(ident)
    if slot is None:
        slot = _SLOTS[ident] = asyncio.Semaphore(limit)
    return slot


_READ_TIMEOUT = "read timeout: longest wait for the reply once sent (queue time aside)"


class Endpoint(BaseModel):
    """One OpenAI-compatible endpoint: model, server, key variable, prices and limits."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, description="label of this endpoint (config option name)")
    model: str = Field(min_length=1, description="model name sent with each request")
    base_url: str | None = Field(None, description="None = the SDK's default (api.openai.com)")
    api_key_env: str | None = Field(
        "OPENAI_API_KEY",
        min_length=1,
        description="environment variable holding the key; None = no key",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature")
    max_tokens: int = Field(1024, gt=0, le=10_000_000, description="reply budget per call")
    price_input_per_1m: float = Field(
        0.0, ge=0, le=MAX_PRICE, description="USD per 1M input tokens"
    )
    price_output_per_1m: float = Field(
        0.0, ge=0, le=MAX_PRICE, description="USD per 1M output tokens"
    )
    timeout_s: float = Field(120.0, gt=0, le=86_400, description=_READ_TIMEOUT)
    connect_timeout_s: float = Field(
        10.0, gt=0, le=3600, description="longest wait to open a connection (DNS, TCP, TLS)"
    )
    deadline_s: float | None = Field(
        None,
        gt=0,
        le=172_800,
        description="longest time one request may take, first byte sent to last byte read: "
        "a server that trickles bytes resets the read timeout, never this; None = "
        "connect_timeout_s + 2 * timeout_s",
    )
    max_reply_chars: int = Field(
        1_000_000,
        gt=0,
        le=100_000_000,
        description="longest reply text kept: a longer one is cut, with a note saying so; a "
        "reply body over 4 bytes a character (+64 KiB) is not read further and fails the call",
    )
    preflight: bool = Field(
        True,
        description="check the server before any work (GET /models, a 1-token completion); "
        "false: no check at all",
    )
    max_retries: int = Field(
        4,
        ge=0,
        le=100,
        description="retries per call of 429/5xx/timeouts/bad bodies and invalid replies",
    )
    backoff_initial_s: float = Field(
        1.0, gt=0, le=3600, description="first retry wait; doubles, jittered"
    )
    backoff_max_s: float = Field(
        30.0, gt=0, le=3600, description="cap of one wait (Retry-After aside)"
    )
    retry_after_max_s: float = Field(
        30.0,
        ge=0,
        le=86_400,
        description="longest wait a server's Retry-After may impose (a longer ask is retried "
        "sooner): backoff_max_s's default, so no one wait outlasts our own longest",
    )
    give_up_tries: int = Field(
        8,
        ge=0,
        le=10_000,
        description="failed tries (429/5xx/timeouts/unreadable bodies), before this endpoint's "
        "first usable reply in the job, after which every call on it fails at once; 0 = never",
    )
    give_up_s: float | None = Field(
        60.0,
        gt=0,
        le=86_400,
        description="seconds from such an endpoint's first failed try after which it is given "
        "up the same way (a retry wait that would end later gives up at once); None = never",
    )
    max_concurrency: int = Field(
        32, gt=0, le=10_000, description="requests in flight at once to this endpoint (all roles)"
    )
    structured_output: StructuredOutput = Field(
        "json_schema",
        description="first rung of the structured-output ladder; a refusal steps down "
        "(json_schema, json_object_schema, json_object, none)",
    )
    context_window: int | None = Field(
        None,
        gt=0,
        le=100_000_000,
        description="the server's window in tokens (prompt + reply); requests are fitted "
        "into it with a margin (benchmark.llm.window); None = unknown, not fitted",
    )

    @model_validator(mode="after")
    def _room_in_window(self) -> Endpoint:
        if self.context_window is not None and self.max_tokens >= self.context_window:
            raise PydanticCustomError(
                NO_ECHO,
                f"max_tokens ({self.max_tokens}) leaves no room for a prompt in "
                f"context_window ({self.context_window})",
            )
        return self

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        problem = None if value is None else http_url_problem(value)
        if problem is None:
            return value
        if "credentials" in problem:
            problem += ": put the key in the environment variable named by api_key_env"
        else:
            problem += ", or null for the SDK default"
        raise PydanticCustomError(NO_ECHO, problem)

    @property
    def request_deadline_s(self) -> float:
        """``deadline_s``, or the longest a well-behaved server can take: a connection,
        then the whole generation (``timeout_s``) and its body read, with room to spare."""
        if self.deadline_s is not None:
            return self.deadline_s
        return self.connect_timeout_s + 2 * self.timeout_s

    @property
    def max_reply_bytes(self) -> int:
        """The most of a reply body read: ``max_reply_chars`` of UTF-8 (at most 4 bytes a
        character) and room for the JSON around it."""
        return 4 * self.max_reply_chars + 65_536

    def api_key(self, role: str) -> str:
        """The key from the environment; a missing one is a one-line user error."""
        if self.api_key_env is None:
            return "not-needed"  # local servers accept any key; the SDK insists on one
        value = os.environ.get(self.api_key_env, "")
        if not value:
            raise UserError(
                f"{role} endpoint '{self.name}' ({self.model}) needs the environment variable "
                f"{self.api_key_env}, which is not set"
            )
        return value

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for these counts; never negative, NaN or infinite, whatever a server's usage
        said (the client clamps counts already; this holds for any caller)."""
        total = 0.0
        for count, price in (
            (input_tokens, self.price_input_per_1m),
            (output_tokens, self.price_output_per_1m),
        ):
            if isinstance(count, int | float) and 0 < count < 1e15:
                total += count * price
        return total / 1_000_000
