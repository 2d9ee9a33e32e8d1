"""A lean HTTP path for chat completions, the call a benchmark makes thousands of times.

The ``openai`` SDK spends ~1.9 ms of CPU per call building typed requests and
responses; at 64 calls in flight on two cores that caps throughput at ~0.82
of what the server allows (measured, ``benchmarks/llm_throughput.py``). This
path posts the body we already built over one aiohttp session per client
(~0.4 ms a call) and raises the SDK's own exception types (``RateLimitError``,
``InternalServerError``, ``APITimeoutError``...), so retries, messages and
callers are the same as on the SDK path. The Responses API stays on the SDK.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any, TypeVar

import aiohttp
import openai

from benchmark.llm.endpoint import Endpoint, normalise_base_url
from benchmark.llm.reach import shown_url
from benchmark.llm.retry import MalformedReply
from benchmark.redaction import clip

try:  # the HTTP models the SDK's exceptions carry
    import httpx2 as httpx  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

T = TypeVar("T")
_ERROR_BYTES = 65_536  # of an error body kept: its message is clipped to a line anyway
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


class ChatTransport:
    """POST ``/chat/completions`` on one endpoint; one connection pool, opened on first use."""

    def __init__(
        self,
        base_url: str | None,
        api_key: str,
        timeout_s: float,
        connect_timeout_s: float = 10.0,
        max_bytes: int | None = None,
    ) -> None:
        self.url = normalise_base_url(base_url) + "/chat/completions"
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.timeout = request_timeout(timeout_s, connect_timeout_s)
        self.max_bytes = max_bytes  # of a reply body read; None: no limit
        self._session: aiohttp.ClientSession | None = None

    async def post(self, body: dict[str, Any] | str | bytes) -> bytes:
        """The raw reply body (``body`` a dict, or its JSON as text or UTF-8); an HTTP error
        or a timeout raises the SDK's exception, a body over ``max_bytes``
        :class:`ReplyTooLarge` (the rest is never read)."""
        return (await self.exchange(body))[0]

    async def exchange(self, body: dict[str, Any] | str | bytes) -> tuple[bytes, str]:
        """:meth:`post`, with the reply's content-type (a hint for a body that is not JSON)."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                headers=self.headers,
                timeout=self.timeout,
            )
        try:
            if isinstance(body, bytes):
                payload = body
            else:
                text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
                payload = text.encode()
            # A request abandoned before its headers (timeout, cancelled job) closes its
            # connection inside aiohttp; one abandoned while its body is read, here.
            response = await self._session.post(self.url, data=payload)
            failed = response.status >= 400  # its body is read for a message only
            try:
                limit = _ERROR_BYTES if failed else self.max_bytes
                raw = await read_capped(response, limit, cut=failed)
            except BaseException:
                response.close()  # never back to the pool: the server stops generating
                raise
            response.release()
            if failed:
                text = raw.decode("utf-8", "replace")
                raise _status_error(self.url, response.status, dict(response.headers), text)
            return raw, response.headers.get("Content-Type", "")
        except (TimeoutError, asyncio.TimeoutError) as exc:
            if isinstance(exc, aiohttp.ConnectionTimeoutError):
                what = f"no connection within {self.timeout.connect:g} s (connect_timeout_s)"
            else:
                what = f"no reply bytes for {self.timeout.sock_read:g} s (the endpoint's timeout_s)"
            raise TimedOut(what, self.url) from None
        except aiohttp.ClientError as exc:
            raise openai.APIConnectionError(
                message=f"Connection error: {type(exc).__name__}: {clip(str(exc), 200)}",
                request=httpx.Request("POST", self.url),
            ) from None

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


async def within_deadline(endpoint: Endpoint, call: Awaitable[T]) -> T:
    """``call``, given up at ``endpoint``'s total deadline (:class:`DeadlineExceeded`)."""
    seconds = endpoint.request_deadline_s
    try:
        async with asyncio.timeout(seconds):
            return await call
    except TimeoutError:  # the transports turn their own timeouts into the SDK's
        raise DeadlineExceeded(seconds, shown_url(endpoint.base_url)) from None


class ReplyTooLarge(MalformedReply):
    """A reply body over the endpoint's limit: not read further, the call fails untried
    again (a server that sends megabytes once sends them again)."""

    final = True  # not retried (retry.is_transient)


class TimedOut(openai.APITimeoutError):
    """The SDK's timeout, saying which limit (a setting of the endpoint) was reached."""

    def __init__(self, message: str, url: str) -> None:
        openai.APIConnectionError.__init__(
            self, message=message, request=httpx.Request("POST", url)
        )


class DeadlineExceeded(TimedOut):
    """No complete reply within the endpoint's ``deadline_s``, however steadily its bytes
    came (a trickle resets the read timeout); retried like any timeout."""

    def __init__(self, seconds: float, url: str) -> None:
        super().__init__(f"no complete reply within {seconds:g} s (the endpoint's deadline_s)", url)


async def read_capped(
    response: aiohttp.ClientResponse, max_bytes: int | None, cut: bool = False
) -> bytes:
    """The body (bytes: ``json.loads`` needs no charset sniffing), at most ``max_bytes``
    of it: a longer one raises :class:`ReplyTooLarge` as soon as it is seen to be, or with
    ``cut`` gives its first ``max_bytes``."""
    if max_bytes is None:
        return await response.read()
    declared = response.content_length
    if not cut and declared is not None and declared > max_bytes:
        raise ReplyTooLarge(_too_large(max_bytes, f"it declares {declared:,}"))
    chunks: list[bytes] = []
    size = 0
    while chunk := await response.content.read(min(1 << 16, max_bytes + 1 - size)):
        size += len(chunk)
        if size > max_bytes:
            if cut:
                chunks.append(chunk[: len(chunk) - (size - max_bytes)])
                response.close()  # the rest unread: never back to the pool
                break
            raise ReplyTooLarge(_too_large(max_bytes, "not read further"))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(max_bytes: int, what: str) -> str:
    return f"reply body over {max_bytes:,} bytes ({what}; the endpoint's max_reply_chars sets it)"


def request_timeout(read_s: float, connect_s: float) -> aiohttp.ClientTimeout:
    """No total: the clock starts once a connection is open (a request waiting for a slot
    of ``max_concurrency`` is not sent yet); ``read_s`` bounds each wait for reply bytes,
    which for an unstreamed completion is the whole generation, as httpx's read timeout."""
    return aiohttp.ClientTimeout(total=None, connect=connect_s, sock_read=read_s)


def _status_error(url: str, status: int, headers: dict[str, str], text: str) -> openai.APIError:
    """The exception the SDK would raise for this response (same class and message shape)."""
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    data = body.get("error", body) if isinstance(body, dict) else body
    response = httpx.Response(
        status, headers=headers, content=text.encode(), request=httpx.Request("POST", url)
    )
    cls = _STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else None)
    message = f"Error code: {status} - {clip(str(body), 1000, first_line=True)}"
    if cls is None:
        return openai.APIStatusError(message, response=response, body=data)
    return cls(message, response=response, body=data)
