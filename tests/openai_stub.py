"""A scriptable OpenAI-compatible HTTP server on 127.0.0.1, so LLM client code is tested offline.

The stub is a real ``aiohttp.web`` server in a background thread with its own event loop, so the
official ``openai`` SDK (sync or async, httpx or aiohttp transport) talks to it over real sockets:
retries, timeouts, status-code mapping and JSON parsing are exercised exactly as in production.

Scripting, from the test thread:

* ``stub.reply = lambda body: "text"`` (or a :class:`Fault`) decides each completion, chat or
  Responses API (a Responses body has ``input`` where a chat body has ``messages``);
* ``stub.queue(Fault.status(429, retry_after=0.05), times=1)`` injects faults before the hook;
* ``stub.json_schema = "reject"`` mimics local servers that refuse structured output;
* ``stub.require_key = "sk-test"`` enforces a bearer token;
* ``stub.latency = 0.05`` delays every call.

``POST /v1/responses/compact`` needs no hook: it returns the input's user messages and one
compaction item whose content :func:`decrypt` reads back (queued faults apply to it too).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import openai_stub_responses as responses_api
import pytest
from aiohttp import web
from openai_stub_responses import CREATED, count_words
from openai_stub_responses import decrypt as decrypt  # re-exported: what a compaction holds

Route = Literal["chat", "responses", "compact"]

ReplyHook = Callable[[dict[str, Any]], "str | Fault | Awaitable[str | Fault]"]


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour; build with the class methods, not the constructor."""

    kind: Literal["status", "hang", "malformed", "empty_choices"]
    status_code: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    message: str = ""

    @classmethod
    def status(cls, code: int, retry_after: float | None = None, message: str = "") -> Fault:
        """An HTTP error with an OpenAI-style error body (and ``Retry-After`` when given)."""
        return cls(kind="status", status_code=code, retry_after=retry_after, message=message)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Sleep before answering normally; lets tests drive client-side timeouts."""
        return cls(kind="hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body is not valid JSON."""
        return cls(kind="malformed")

    @classmethod
    def empty_choices(cls) -> Fault:
        """A well-formed completion with ``choices: []`` (Responses routes: ``output: []``)."""
        return cls(kind="empty_choices")


@dataclass(frozen=True)
class StubRequest:
    """One request as the server received it (body is ``None`` when it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class _Queued:
    fault: Fault
    remaining: int


_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


def error_body(
    message: str, type_: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The JSON shape OpenAI uses for errors; the SDK reads ``error.message`` from it."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def message_text(message: dict[str, Any]) -> str:
    """Text of a chat message whose content is a string or a list of typed parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def default_reply(body: dict[str, Any]) -> str:
    """Short, deterministic echo; ``{}`` when JSON output was requested so it still parses."""
    fmt = body.get("response_format") or (body.get("text") or {}).get("format") or {}
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        return "{}"
    if "input" in body:
        last = responses_api.last_user_text(body)
    else:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        last = message_text(users[-1]) if users else ""
    return "stub reply: " + " ".join(last.split()[:12])


@dataclass
class OpenAIStub:
    """Loopback OpenAI-compatible server; use as a context manager or via the fixture."""

    reply: ReplyHook = default_reply
    json_schema: Literal["accept", "reject"] = "accept"
    require_key: str | None = None
    latency: float = 0.0
    host: str = "127.0.0.1"
    _requests: list[StubRequest] = field(default_factory=list, init=False, repr=False)
    _queue: deque[_Queued] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _runner: web.AppRunner | None = field(default=None, init=False, repr=False)
    _closing: asyncio.Event | None = field(default=None, init=False, repr=False)
    _port: int | None = field(default=None, init=False, repr=False)
    _served: int = field(default=0, init=False, repr=False)
    _in_flight: int = field(default=0, init=False, repr=False)
    _max_in_flight: int = field(default=0, init=False, repr=False)

    # -- scripting and inspection (test thread) -------------------------------------------

    def queue(self, fault: Fault, times: int = 1) -> None:
        """Serve ``fault`` for the next ``times`` completions, before the reply hook is asked."""
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._queue.append(_Queued(fault, times))

    @property
    def requests(self) -> list[StubRequest]:
        """Snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def max_concurrent(self) -> int:
        """Highest number of requests in flight at once; proves the server really overlaps."""
        with self._lock:
            return self._max_in_flight

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("stub is not running")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIStub:
        if self._thread is not None:
            raise RuntimeError("stub already started")
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="openai-stub", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            asyncio.run_coroutine_threadsafe(self._serve(), loop).result(timeout=10)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Wake hanging handlers, close the socket and join the thread; safe to call twice."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
            finally:
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        self._loop = self._thread = None
        self._runner = self._closing = None
        self._port = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", partial(self._handle, "chat"))
        app.router.add_post("/v1/responses", partial(self._handle, "responses"))
        app.router.add_post("/v1/responses/compact", partial(self._handle, "compact"))
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((self.host, 0))
        self._port = sock.getsockname()[1]
        await web.SockSite(runner, sock).start()
        self._runner = runner

    async def _shutdown(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _sleep(self, seconds: float) -> None:
        """Sleep that ends early when the server stops, so ``stop()`` never waits on a hang."""
        if seconds <= 0 or self._closing is None:
            return
        try:
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            return

    # -- request handling (server thread) -------------------------------------------------

    async def _handle(self, route: Route, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        with self._lock:
            self._requests.append(
                StubRequest(request.method, request.path, dict(request.headers), body)
            )
            self._served += 1
            serial = self._served
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            return await self._respond(request, body, serial, route)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _respond(
        self, request: web.Request, body: dict[str, Any] | None, serial: int, route: Route
    ) -> web.StreamResponse:
        if self.require_key is not None:
            sent = request.headers.get("Authorization", "")
            if sent != f"Bearer {self.require_key}":
                return web.json_response(
                    error_body(
                        "Incorrect API key provided.",
                        "invalid_request_error",
                        None,
                        "invalid_api_key",
                    ),
                    status=401,
                )
        if body is None:
            return web.json_response(
                error_body("Request body must be a JSON object.", "invalid_request_error"),
                status=400,
            )
        problem = responses_api.input_problem(body) if route != "chat" else None
        if problem is not None:
            return web.json_response(
                error_body(problem, "invalid_request_error", "input"), status=400
            )
        fmt = body.get("response_format")
        if (
            self.json_schema == "reject"
            and isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
        ):
            return web.json_response(
                error_body(
                    "response_format json_schema is not supported",
                    "invalid_request_error",
                    "response_format",
                ),
                status=400,
            )
        await self._sleep(self.latency)

        outcome: str | Fault | None = self._next_queued()
        if isinstance(outcome, Fault) and outcome.kind == "hang":
            await self._sleep(outcome.seconds)
            outcome = None
        if outcome is None and route == "compact":
            return web.json_response(responses_api.compacted(body, serial))
        if outcome is None:
            outcome = await self._ask_hook(body)
            if isinstance(outcome, Fault) and outcome.kind == "hang":
                await self._sleep(outcome.seconds)
                outcome = default_reply(body)
        if isinstance(outcome, Fault):
            return self._fault_response(outcome, body, serial, route)
        if route == "responses":
            return web.json_response(responses_api.response(body, outcome, serial))
        return web.json_response(completion(body, outcome, serial))

    def _next_queued(self) -> Fault | None:
        with self._lock:
            if not self._queue:
                return None
            head = self._queue[0]
            head.remaining -= 1
            if head.remaining == 0:
                self._queue.popleft()
            return head.fault

    async def _ask_hook(self, body: dict[str, Any]) -> str | Fault:
        result = self.reply(body)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, (str, Fault)):
            raise TypeError(f"reply hook returned {type(result).__name__}, not str or Fault")
        return result

    def _fault_response(
        self, fault: Fault, body: dict[str, Any], serial: int, route: Route
    ) -> web.StreamResponse:
        if fault.kind == "malformed":
            return web.Response(
                status=200,
                text='{"id": "chatcmpl-broken", "choices": [',
                content_type="application/json",
            )
        if fault.kind == "empty_choices" and route == "compact":
            return web.json_response({**responses_api.compacted(body, serial), "output": []})
        if fault.kind == "empty_choices" and route == "responses":
            return web.json_response(responses_api.response(body, None, serial))
        if fault.kind == "empty_choices":
            payload = completion(body, "", serial)
            payload["choices"] = []
            return web.json_response(payload)
        type_, code = _ERROR_TYPES.get(fault.status_code, ("server_error", None))
        message = fault.message or f"stub fault: HTTP {fault.status_code}"
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = f"{fault.retry_after:g}"
        return web.json_response(
            error_body(message, type_, None, code), status=fault.status_code, headers=headers
        )


def completion(body: dict[str, Any], content: str, serial: int) -> dict[str, Any]:
    """A ChatCompletion payload with word-count usage, deterministic given the request order."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    prompt_tokens = sum(count_words(message_text(m)) for m in messages)
    completion_tokens = count_words(content)
    return {
        "id": f"chatcmpl-stub-{serial}",
        "object": "chat.completion",
        "created": CREATED,
        "model": str(body.get("model", "stub-model")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@pytest.fixture(name="openai_stub")
def openai_stub_fixture() -> Iterator[OpenAIStub]:
    """A running stub for one test, always stopped afterwards.

    Registered as ``openai_stub``; the function has another name so that importing it into a
    test module or conftest does not clash with test parameters called ``openai_stub``.
    """
    with OpenAIStub() as stub:
        yield stub


# Lets ``from openai_stub import openai_stub`` work too (same fixture, same name).
openai_stub = openai_stub_fixture
