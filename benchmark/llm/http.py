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
from typing import Any

import aiohttp
import openai

from benchmark.llm.endpoint import normalise_base_url

try:  # the HTTP models the SDK's exceptions carry
    import httpx2 as httpx  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

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
        self, base_url: str | None, api_key: str, timeout_s: float, connect_timeout_s: float = 10.0
    ) -> None:
        self.url = normalise_base_url(base_url) + "/chat/completions"
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.timeout = request_timeout(timeout_s, connect_timeout_s)
        self._session: aiohttp.ClientSession | None = None

    async def post(self, body: dict[str, Any] | str | bytes) -> bytes:
        """The raw reply body (``body`` a dict, or its JSON as text or UTF-8); an HTTP error
        or a timeout raises the SDK's exception."""
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
            try:
                raw = await response.read()  # bytes: json.loads needs no charset sniffing
            except BaseException:
                response.close()  # never back to the pool: the server stops generating
                raise
            response.release()
            if response.status >= 400:
                text = raw.decode("utf-8", "replace")
                raise _status_error(self.url, response.status, dict(response.headers), text)
            return raw
        except (TimeoutError, asyncio.TimeoutError):
            raise openai.APITimeoutError(request=httpx.Request("POST", self.url)) from None
        except aiohttp.ClientError as exc:
            raise openai.APIConnectionError(
                message=f"Connection error: {type(exc).__name__}: {exc}",
                request=httpx.Request("POST", self.url),
            ) from None

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


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
    message = f"Error code: {status} - {body}"
    if cls is None:
        return openai.APIStatusError(message, response=response, body=data)
    return cls(message, response=response, body=data)
