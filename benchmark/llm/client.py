"""The one place that talks to LLMs: the ``openai`` SDK's async client over aiohttp.

Every request goes the same way (:meth:`LLMClient._exchange`): the response
cache first; else a slot of the endpoint's concurrency limit, the call, the
ledger and the cache. Around that, one retry loop (:mod:`benchmark.llm.retry`)
retries transient failures and invalid replies alike; the SDK's own retries
are off so every retry is counted. A server that refuses the way a structured
reply is asked for is asked one rung lower (:mod:`benchmark.llm.structured_output`);
every client of the endpoint remembers it, and the cache remembers the refusal.
A retry after an invalid reply is a repaired request, never the same one.

Stages call the synchronous methods from any thread, or await the ``a``
methods on the shared loop (:mod:`benchmark.llm.loop`). The provider's Responses
API (native compaction, and continuing from its encrypted item) is
:class:`benchmark.llm.native.NativeClient`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import openai

from benchmark.llm.breaker import breaker_of
from benchmark.llm.chat_reply import read_chat_reply, sane_value, usable_hit
from benchmark.llm.completion import Completion
from benchmark.llm.endpoint import Endpoint, endpoint_slot
from benchmark.llm.failures import (
    EndpointGivenUp,
    EndpointUnreachable,
    InvalidReplies,
    LLMError,
    describe_failure,
    failure_kind,
)
from benchmark.llm.http import ChatTransport, within_deadline
from benchmark.llm.loop import _Loop
from benchmark.llm.open_clients import close_all, closed, opened
from benchmark.llm.reach import (
    CONNECT_TRIES,
    connect_failure,
    is_permanent,
    reach_of,
    shown_url,
)
from benchmark.llm.reply_cache import ResponseCache, body_text, request_key
from benchmark.llm.reply_scrub import ReplyScrubber
from benchmark.llm.retry import (
    InvalidReply,
    MalformedReply,
    first_wait,
    is_transient,
    retrying,
)
from benchmark.llm.send_gate import passed
from benchmark.llm.structured_output import REFUSED, Repair, ladder_of
from benchmark.llm.usage import CallPurpose, Usage, UsageLedger
from benchmark.redaction import clip

T = TypeVar("T")
# A request's sender: the body, and its canonical JSON's UTF-8 when the cache key needed it.
Send = Callable[[dict[str, Any], bytes | None], Awaitable[dict[str, Any]]]


class LLMClient:
    """One endpoint in one role (``judge``, ``answerer``, ``summarizer``, ``probe_writer``)."""

    def __init__(
        self,
        endpoint: Endpoint,
        role: str,
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.role = role
        self.ledger = ledger or UsageLedger()
        self.cache = cache
        self._key = endpoint.api_key(role)  # fails fast, before any work
        # Error texts are scrubbed of this key too, whatever its variable is called.
        self._key_names = (endpoint.api_key_env,) if endpoint.api_key_env else ()
        # Secrets in a reply (one the server echoes, one a model writes) are scrubbed.
        self._scrubber = ReplyScrubber(self._key_names)
        self._ladder = ladder_of(endpoint)  # shared by every client of this endpoint
        self._client: openai.AsyncOpenAI | None = None  # the Responses API
        self._transport: ChatTransport | None = None  # chat completions
        self._semaphore: asyncio.Semaphore | None = None  # see _slot
        self._reach = reach_of(endpoint.base_url)  # shared by every client of this base_url
        self._breaker = breaker_of(endpoint.base_url, endpoint.model)  # and of this model

    # -- public calls -----------------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | None = None,
        parse: Callable[[str], T] | None = None,
        purpose: CallPurpose | None = None,
    ) -> tuple[Completion, T | None]:
        """Send ``messages``; with ``parse``, retry until it accepts the reply text.
        ``purpose`` (the probe or point served) goes to the ledger's call record only."""
        return _Loop.run(self.acomplete(messages, schema=schema, parse=parse, purpose=purpose))

    async def acomplete(
        self,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | None = None,
        parse: Callable[[str], T] | None = None,
        purpose: CallPurpose | None = None,
    ) -> tuple[Completion, T | None]:
        window = getattr(self.endpoint, "context_window", None)
        repair = Repair(messages, self.endpoint.max_tokens, window)

        async def attempt(n: int) -> Completion:
            return await self._chat(repair, schema, n, purpose)

        return await self._with_retries(attempt, parse, repair)

    # -- the request path -------------------------------------------------------------------

    async def _with_retries(
        self,
        attempt: Callable[[int], Awaitable[Completion]],
        parse: Callable[[str], T] | None,
        repair: Repair | None = None,
    ) -> tuple[Completion, T | None]:
        """Run ``attempt(n)`` (n = invalid replies so far) until it gives a usable reply.

        With ``parse``, a reply cut at ``max_tokens`` is invalid; ``repair`` then changes
        the next request. Without, a cut reply is used and counted (``truncated``).

        The first try runs bare; only a transient failure builds the retry loop
        (it costs ~0.1 ms a call, which matters at hundreds of calls a second).
        """
        invalid = 0
        refused = 0  # tries that could not connect

        async def once() -> tuple[Completion, T | None]:
            nonlocal invalid, refused
            try:
                completion = await attempt(invalid)
            except openai.APIConnectionError as exc:
                reason = None if self._reach.reached else connect_failure(exc)
                if reason is None:
                    raise
                refused += 1
                tries = min(CONNECT_TRIES, self.endpoint.max_retries + 1)
                if refused >= tries or is_permanent(reason):
                    self._reach.dead = self._reach.dead or reason
                    raise self._unreachable() from None
                raise
            if parse is None:
                if completion.truncated:
                    self.ledger.record(self.role, truncated=1)
                return completion, None
            try:
                if completion.truncated:
                    raise ValueError("reply cut at max_tokens (finish_reason: length)")
                return completion, parse(completion.text)
            except ValueError as exc:
                invalid += 1
                self.ledger.record(self.role, Usage(failures=1))
                text = clip(str(exc), 200, first_line=True, key_names=self._key_names)
                if repair is not None:
                    repair.after(completion, text)
                raise InvalidReply(text) from None

        def count_retry(_: object) -> None:
            self.ledger.record(self.role, Usage(retries=1))

        try:
            try:
                return await once()
            except Exception as exc:
                if not is_transient(exc) or self.endpoint.max_retries == 0:
                    raise
                count_retry(None)
                e = self.endpoint
                await self._wait(first_wait(exc, e.backoff_initial_s, e.retry_after_max_s))
            async for retry in retrying(
                self.endpoint.max_retries - 1,
                self.endpoint.backoff_initial_s,
                self.endpoint.backoff_max_s,
                on_retry=count_retry,
                first=1,
                retry_after_max_s=self.endpoint.retry_after_max_s,
                sleep=self._wait,
            ):
                with retry:
                    return await once()
        except InvalidReply as exc:
            raise InvalidReplies(
                f"{self.role} call to {self.endpoint.name} failed: invalid reply after "
                f"{invalid} tries: {exc}"
            ) from None
        except (openai.APIError, MalformedReply) as exc:
            what = "bad reply" if isinstance(exc, MalformedReply) else failure_kind(exc)
            raise LLMError(
                clip(
                    f"{self.role} call to {self.endpoint.name} failed: {what}: {exc}",
                    600,
                    first_line=True,
                    key_names=self._key_names,
                )
            ) from None
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _chat(
        self,
        repair: Repair,
        schema: dict[str, Any] | None,
        attempt: int,
        purpose: CallPurpose | None = None,
    ) -> Completion:
        """One try of a chat call; a structured one at the endpoint's rung of the ladder."""
        base: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": repair.messages,
            "temperature": self.endpoint.temperature,
            "max_tokens": repair.max_tokens,
        }

        async def exchange(body: dict[str, Any]) -> dict[str, Any]:
            return await self._exchange("chat.completions", body, attempt, self._send_chat, purpose)

        if schema is None:
            return Completion(**await exchange(base))
        value, fmt = await self._ladder.ask(
            base,
            schema,
            exchange,
            refused=lambda body: self._refused(body, attempt),
            demoted=lambda: self.ledger.record(self.role, fallbacks=1),
        )
        return Completion(**value, response_format=fmt)

    async def _exchange(
        self,
        api: str,
        body: dict[str, Any],
        attempt: int,
        send: Send,
        purpose: CallPurpose | None = None,
    ) -> dict[str, Any]:
        """One request: from the cache, or sent within the endpoint's concurrency limit."""
        key = data = None
        account = partial(self.ledger.account, self.role, self.endpoint, api, body, purpose=purpose)
        if self.cache is not None:
            data = body_text(body).encode()  # the key hashes it; the chat path sends it as is
            key = self._cache_key(api, body, data)
            hit = self.cache.get(key, attempt)
            if hit is not None and hit.get(REFUSED):
                return hit
            if hit is not None and (hit := usable_hit(hit, *self._cap)) is not None:
                hit = self._scrubber.value(hit)  # a cache filled before replies were scrubbed
                account(time.time_ns(), hit, cached=True)
                return hit
        await passed()  # the job's store is open: a request may cost money now
        async with self._slot():
            if self._reach.dead is not None:  # known unreachable: no call, no wait
                raise self._unreachable()
            if self._breaker.broken is not None:  # given up: no call, no wait
                raise self._given_up()
            start = time.time_ns()
            try:
                # The read timeout restarts at every byte: a trickle meets the deadline.
                sent = within_deadline(self.endpoint, send(body, data))
                value = sane_value(await sent, *self._cap)
            except openai.APIStatusError as exc:  # the server answered: it is reachable
                self._reach.reached = True
                account(start, None, error=describe_failure(exc, self._key_names))
                self._count(exc, is_transient(exc))
                raise
            except openai.APIError as exc:
                account(start, None, error=describe_failure(exc, self._key_names))
                self._count(exc, self._reach.reached or connect_failure(exc) is None)
                raise
            except MalformedReply as exc:  # read by us: the message says what was wrong
                self._reach.reached = True
                account(start, None, error=describe_failure(exc, self._key_names))
                self._count(exc)
                raise
            except (ValueError, TypeError, AttributeError) as exc:  # unreadable by the SDK
                self._reach.reached = True
                account(start, None, error=describe_failure(exc, self._key_names))
                text = clip(f"{type(exc).__name__}: {exc}", 300, key_names=self._key_names)
                self._count(MalformedReply(text))
                raise MalformedReply(text) from None
        self._reach.reached = True
        self._breaker.worked = True  # a usable reply: never given up in this job
        value = self._scrubber.value(value)
        account(start, value)
        if key is not None and self.cache is not None:
            self.cache.put(key, attempt, value, model=self.endpoint.model, role=self.role)
        return value

    @property
    def _cap(self) -> tuple[int, str]:
        """The longest reply text kept, and the setting a cut reply's note names."""
        limit = self.endpoint.max_reply_chars
        return limit, f"{self.role} endpoint '{self.endpoint.name}' max_reply_chars={limit}"

    def _unreachable(self) -> EndpointUnreachable:
        return EndpointUnreachable(
            f"{self.role} endpoint '{self.endpoint.name}' ({self.endpoint.model}) unreachable "
            f"at {shown_url(self.endpoint.base_url)}: {self._reach.dead}"
        )

    def _count(self, exc: BaseException, counted: bool = True) -> None:
        """A failed try for the endpoint's breaker (``counted``: one a retry could mend,
        not a connection refused before any answer, reach's case); raises
        :class:`EndpointGivenUp` when it gives the endpoint up."""
        if counted and not self._breaker.worked:
            what = "bad reply" if isinstance(exc, MalformedReply) else failure_kind(exc)  # type: ignore[arg-type]
            last = clip(f"{what}: {exc}", 300, first_line=True, key_names=self._key_names)
            if self._breaker.failed(last, self.endpoint):
                raise self._given_up() from None

    async def _wait(self, seconds: float) -> None:
        """A retry's wait, cut short (and failed) when the endpoint is given up."""
        if not await self._breaker.wait(seconds, self.endpoint):
            raise self._given_up()

    def _given_up(self) -> EndpointGivenUp:
        return EndpointGivenUp(self._breaker.message(self.role, self.endpoint))

    def _refused(self, body: dict[str, Any], attempt: int) -> None:
        """Remember in the cache that ``body`` was refused (a rerun steps down unasked)."""
        if self.cache is not None:
            key, model = self._cache_key("chat.completions", body), self.endpoint.model
            self.cache.put(key, attempt, {REFUSED: True}, model=model, role=self.role)

    def _cache_key(self, api: str, body: dict[str, Any], data: bytes | None = None) -> str:
        e = self.endpoint
        return request_key(api=api, model=e.model, base_url=e.base_url, body=body, data=data)

    def _slot(self) -> asyncio.Semaphore:
        """The endpoint's concurrency limit, shared by every client of that endpoint."""
        if self._semaphore is None:
            self._semaphore = endpoint_slot(self.endpoint)
        return self._semaphore

    async def _send_chat(self, body: dict[str, Any], data: bytes | None = None) -> dict[str, Any]:
        """Chat completions over the lean transport (:mod:`benchmark.llm.http`); ``data``
        is ``body`` encoded already."""
        if self._transport is None:
            self._transport = ChatTransport(
                self.endpoint.base_url,
                self._key,
                self.endpoint.timeout_s,
                self.endpoint.connect_timeout_s,
                max_bytes=self.endpoint.max_reply_bytes,
            )
            opened(self)
        raw, content_type = await self._transport.exchange(body if data is None else data)
        return read_chat_reply(raw, content_type)

    async def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.endpoint.base_url,
                timeout=openai.Timeout(
                    self.endpoint.timeout_s, connect=self.endpoint.connect_timeout_s
                ),
                max_retries=0,  # retries are ours (counted, bounded, Retry-After aware)
                http_client=openai.DefaultAioHttpClient(),
            )
            opened(self)
        return self._client

    def close(self) -> None:
        closed(self)
        if self._client is not None:
            client, self._client = self._client, None
            _Loop.run(client.close())
        if self._transport is not None:
            transport, self._transport = self._transport, None
            _Loop.run(transport.close())


__all__ = [
    "Completion",
    "EndpointGivenUp",
    "EndpointUnreachable",
    "LLMClient",
    "LLMError",
    "close_all",
    "is_transient",
]
