"""The one place that talks to LLMs: the ``openai`` SDK's async client over aiohttp.

Stages call :meth:`LLMClient.complete` synchronously today; it runs on one
background event loop shared by every client of the process, so the aiohttp
connection pool lives across calls (and concurrent callers can share it).
Replies that fail validation are retried up to ``endpoint.max_retries``
times; transport errors (429, 5xx, timeouts) are retried by the SDK.
A server that rejects ``response_format`` json_schema is asked again with
json_object, then with no format; the client remembers what worked.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import openai
from pydantic import BaseModel

from benchmark.llm.endpoint import Endpoint, StructuredOutput
from benchmark.llm.usage import CallRecord, Usage, UsageLedger

T = TypeVar("T")
_FORMATS: tuple[StructuredOutput, ...] = ("json_schema", "json_object", "none")


class LLMError(Exception):
    """A call that failed after its retries; the message says why (no secrets)."""


class Completion(BaseModel):
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    response_format: StructuredOutput = "none"


class _Loop:
    """A private event loop on a daemon thread, started on first use."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="llm-loop", daemon=True).start()
                cls._loop = loop
            return cls._loop

    @classmethod
    def run(cls, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, cls.get()).result()


_OPEN: set[LLMClient] = set()  # clients with an open pool, until closed


def close_all() -> None:
    """Close every client's connection pool (end of a job, end of a test)."""
    for client in list(_OPEN):
        client.close()


class LLMClient:
    """One endpoint in one role (``judge``, ``answerer``, ``summarizer``, ``probe_writer``)."""

    def __init__(self, endpoint: Endpoint, role: str, ledger: UsageLedger | None = None) -> None:
        self.endpoint = endpoint
        self.role = role
        self.ledger = ledger or UsageLedger()
        self._key = endpoint.api_key(role)  # fails fast, before any work
        self._format: StructuredOutput = endpoint.structured_output
        self._client: openai.AsyncOpenAI | None = None

    async def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.endpoint.base_url,
                timeout=self.endpoint.timeout_s,
                max_retries=self.endpoint.max_retries,
                http_client=openai.DefaultAioHttpClient(),
            )
            _OPEN.add(self)
        return self._client

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | None = None,
        parse: Callable[[str], T] | None = None,
    ) -> tuple[Completion, T | None]:
        """Send ``messages``; with ``parse``, retry until it accepts the reply text."""
        return _Loop.run(self.acomplete(messages, schema=schema, parse=parse))

    async def acomplete(
        self,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | None = None,
        parse: Callable[[str], T] | None = None,
    ) -> tuple[Completion, T | None]:
        problems: list[str] = []
        for _ in range(self.endpoint.max_retries + 1):
            completion = await self._call(messages, schema)
            if parse is None:
                return completion, None
            try:
                return completion, parse(completion.text)
            except ValueError as exc:
                problems.append(str(exc).splitlines()[0][:200])
                self.ledger.record(self.role, Usage(failures=1))
        raise LLMError(f"invalid reply after {len(problems)} tries: {problems[-1]}")

    async def _call(
        self, messages: list[dict[str, str]], schema: dict[str, Any] | None
    ) -> Completion:
        client = await self._sdk()
        while True:
            fmt = self._format if schema is not None else "none"
            body: dict[str, Any] = {
                "model": self.endpoint.model,
                "messages": messages,
                "temperature": self.endpoint.temperature,
                "max_tokens": self.endpoint.max_tokens,
            }
            if fmt == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": schema, "strict": False},
                }
            elif fmt == "json_object":
                body["response_format"] = {"type": "json_object"}
            start = time.time_ns()
            try:
                reply = await client.chat.completions.create(**body)
            except openai.BadRequestError as exc:
                if fmt != "none" and "response_format" in str(exc):
                    self._format = _FORMATS[_FORMATS.index(fmt) + 1]
                    continue
                raise self._failed("chat.completions", body, start, exc) from None
            except (openai.APIError, ValueError) as exc:
                raise self._failed("chat.completions", body, start, exc) from None
            choices = getattr(reply, "choices", None)
            if not choices:
                raise self._failed(
                    "chat.completions", body, start, ValueError("reply has no choices")
                )
            text = choices[0].message.content or ""
            usage = getattr(reply, "usage", None)
            tokens_in = getattr(usage, "prompt_tokens", 0) or 0
            tokens_out = getattr(usage, "completion_tokens", 0) or 0
            self._record("chat.completions", body, start, text, tokens_in, tokens_out)
            return Completion(
                text=text, input_tokens=tokens_in, output_tokens=tokens_out, response_format=fmt
            )

    def _record(
        self,
        api: str,
        body: dict[str, Any],
        start_ns: int,
        reply: str | None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        error: str | None = None,
    ) -> None:
        self.ledger.record_call(
            CallRecord(
                role=self.role,
                endpoint=self.endpoint.name,
                model=self.endpoint.model,
                api=api,
                request=body,
                reply=reply,
                error=error,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=self.endpoint.cost(input_tokens, output_tokens),
                start_ns=start_ns,
                end_ns=time.time_ns(),
            )
        )

    def _failed(self, api: str, body: dict[str, Any], start_ns: int, exc: Exception) -> LLMError:
        error = f"{self.role} call to {self.endpoint.name} failed: {type(exc).__name__}: {exc}"
        self._record(api, body, start_ns, None, error=error)
        return LLMError(error)

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            _OPEN.discard(self)
            _Loop.run(client.close())
