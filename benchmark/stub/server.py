"""A scriptable OpenAI-compatible HTTP server on loopback, so LLM client code runs offline.

The stub is a real ``aiohttp.web`` server in a background thread with its own event loop, so the
official ``openai`` SDK (sync or async, httpx or aiohttp transport) talks to it over real sockets:
retries, timeouts, status-code mapping and JSON parsing are exercised exactly as in production.

Scripting, from any other thread:

* ``stub.reply = lambda body: "text"`` (or a :class:`Fault`) decides each completion, chat or
  Responses API (a Responses body has ``input`` where a chat body has ``messages``);
* ``stub.queue(Fault.status(429, retry_after=0.05), times=1)`` injects faults before the hook;
* ``stub.faults = FaultMix(rate=0.2, seed=0)`` injects seeded random faults (queued ones first);
* a hostile server: ``Fault.patched("choices.0.message.content", 42)``, ``Fault.json([1])``,
  ``Fault.raw(b"<html>", "text/html")``, ``Fault.hostile("reset" | "cut" | "trickle" | "huge")``
  (:mod:`benchmark.stub.hostile`);
* ``stub.json_schema = "reject"`` mimics local servers that refuse structured output;
* ``stub.require_key = "sk-test"`` enforces a bearer token;
* ``stub.latency = 0.05`` delays every call (a timer each: thousands in flight cost no CPU);
* ``OpenAIStub(local=LocalMode())`` behaves like a llama.cpp-class server with a small model
  (:mod:`benchmark.stub.local`; set before start): read what it saw with :meth:`local_stats`.
* ``stub.models = ["m"]`` makes ``GET /v1/models`` list them (None: a 404, no listing; the
  local mode lists its own model).

``POST /v1/responses/compact`` needs no hook: it returns the input's user messages and one
compaction item whose content :func:`decrypt` reads back (faults apply to it too).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from aiohttp import web

import benchmark.stub.responses as responses_api
from benchmark.stub.chat_route import completion, default_reply
from benchmark.stub.faults import (
    Fault,
    FaultKind,
    FaultMix,
    StubStats,
)
from benchmark.stub.hostile import serve as serve_hostile
from benchmark.stub.local import Generated, LocalMode, LocalServer, LocalStats
from benchmark.stub.refusals import Route, fault_response, refuse

ReplyHook = Callable[[dict[str, Any]], "str | Fault | Awaitable[str | Fault]"]


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


def _server_error(status: int) -> Fault | None:
    """A 5xx the server answered on its own, counted as that fault in :class:`StubStats`."""
    return Fault.status(status) if status >= 500 else None


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


@dataclass
class OpenAIStub:
    """Loopback OpenAI-compatible server; use as a context manager or start/stop it.

    ``bind_port=0`` picks a free port (read it from :attr:`port`); ``record=False`` keeps no
    :attr:`requests` (a long-running server would otherwise grow without bound).
    """

    reply: ReplyHook = default_reply
    json_schema: Literal["accept", "reject"] = "accept"
    require_key: str | None = None
    latency: float = 0.0
    models: list[str] | None = None
    faults: FaultMix | None = None
    host: str = "127.0.0.1"
    bind_port: int = 0
    record: bool = True
    local: LocalMode | None = None
    _local: LocalServer | None = field(default=None, init=False, repr=False)
    _requests: list[StubRequest] = field(default_factory=list, init=False, repr=False)
    _queue: deque[_Queued] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _draws: tuple[FaultMix, Iterator[FaultKind | None]] | None = field(
        default=None, init=False, repr=False
    )
    _stats: StubStats = field(default_factory=StubStats, init=False, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _runner: web.AppRunner | None = field(default=None, init=False, repr=False)
    _closing: bool = field(default=False, init=False, repr=False)
    _sleepers: set[asyncio.Future[None]] = field(default_factory=set, init=False, repr=False)
    _port: int | None = field(default=None, init=False, repr=False)
    _in_flight: int = field(default=0, init=False, repr=False)
    _max_in_flight: int = field(default=0, init=False, repr=False)

    # -- scripting and inspection (any thread) --------------------------------------------

    def queue(self, fault: Fault, times: int = 1) -> None:
        """Serve ``fault`` for the next ``times`` completions, before the reply hook is asked."""
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._queue.append(_Queued(fault, times))

    @property
    def requests(self) -> list[StubRequest]:
        """Snapshot of every request received so far, in arrival order (when recording)."""
        with self._lock:
            return list(self._requests)

    def stats(self) -> StubStats:
        """Counters so far: requests, valid 2xx replies, rejections, faults by kind."""
        with self._lock:
            return self._stats.model_copy(deep=True)

    def local_stats(self) -> LocalStats:
        """What the local mode saw and did (:class:`LocalStats`); needs ``local`` set."""
        if self._local is None:
            raise RuntimeError("the stub is not running in local mode")
        return self._local.stats()

    @property
    def max_concurrent(self) -> int:
        """Highest number of requests in flight at once; proves the server really overlaps."""
        with self._lock:
            return self._max_in_flight

    def open_connections(self) -> int:
        """Client connections open now (a keep-alive one too; a dropped one is gone)."""
        if self._loop is None or self._runner is None or self._runner.server is None:
            return 0
        server = self._runner.server

        async def count() -> int:
            return sum(handler.transport is not None for handler in server.connections)

        return asyncio.run_coroutine_threadsafe(count(), self._loop).result(timeout=10)

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
        self._runner = None
        self._port = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        self._closing = False
        app = web.Application()
        app.router.add_post("/v1/chat/completions", partial(self._handle, "chat"))
        app.router.add_post("/v1/responses", partial(self._handle, "responses"))
        app.router.add_post("/v1/responses/compact", partial(self._handle, "compact"))
        self._local = None if self.local is None else LocalServer(self.local)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stub/stats", self._stats_route)  # for a stub in another process
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.bind_port))
        except OSError:
            sock.close()
            await runner.cleanup()
            raise
        self._port = sock.getsockname()[1]
        await web.SockSite(runner, sock, backlog=1024).start()
        self._runner = runner

    async def _shutdown(self) -> None:
        self._closing = True
        for waiter in list(self._sleepers):
            _wake(waiter)
        if self._runner is not None:
            await self._runner.cleanup()

    async def _sleep(self, seconds: float) -> None:
        """A bare timer (no task per sleep) that ends early when the server stops."""
        if seconds <= 0 or self._closing:
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        timer = loop.call_later(seconds, _wake, waiter)
        self._sleepers.add(waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._sleepers.discard(waiter)

    # -- request handling (server thread) -------------------------------------------------

    async def _models(self, request: web.Request) -> web.StreamResponse:
        if self._local is not None:
            return web.json_response(self._local.models())
        if self.models is None:
            raise web.HTTPNotFound()
        data = [{"id": m, "object": "model", "owned_by": "stub"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _stats_route(self, request: web.Request) -> web.Response:
        """``GET /stub/stats``: :meth:`stats` as JSON, for a stub run in its own process."""
        return web.json_response(self.stats().model_dump())

    async def _handle(self, route: Route, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        with self._lock:
            if self.record:
                self._requests.append(
                    StubRequest(request.method, request.path, dict(request.headers), body)
                )
            self._stats.requests += 1
            serial = self._stats.requests
            if self._stats.first_request_at is None:
                self._stats.first_request_at = time.time()
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
        refusal = refuse(request, body, route, self.require_key, self.json_schema)
        if refusal is not None:
            self._count(rejected=True)
            return refusal
        assert body is not None  # a missing body is refused above
        local = self._local if route == "chat" else None
        if local is not None and (refused := local.refusal(body)) is not None:
            self._count(rejected=refused.status < 500, fault=_server_error(refused.status))
            return refused
        await self._sleep(self.latency)

        outcome: str | Fault | None = self._next_fault()
        if isinstance(outcome, Fault) and outcome.kind == "hang":
            self._count(fault=outcome)
            await self._sleep(outcome.seconds)
            outcome = None
        if outcome is None and route == "compact":
            self._count()
            return web.json_response(responses_api.compacted(body, serial))
        if outcome is None and local is not None:
            outcome = await local.generate(body, self._ask_hook, self._sleep)
            if isinstance(outcome, Generated):
                self._count()
                return web.json_response(local.completion(body, outcome, serial))
        if outcome is None:
            outcome = await self._ask_hook(body)
            if isinstance(outcome, Fault) and outcome.kind == "hang":
                self._count(fault=outcome)
                await self._sleep(outcome.seconds)
                outcome = default_reply(body)
        if isinstance(outcome, Fault):
            self._count(fault=outcome)
            if outcome.kind == "hostile":
                closing = partial(getattr, self, "_closing")
                chat = route == "chat"
                return await serve_hostile(
                    outcome, request, body, serial, chat, self._sleep, closing
                )
            return fault_response(outcome, body, serial, route)
        self._count()
        if route == "responses":
            return web.json_response(responses_api.response(body, outcome, serial))
        return web.json_response(completion(body, outcome, serial))

    def _next_fault(self) -> Fault | None:
        """A queued fault if any (no draw then), else the fault mix's next draw."""
        with self._lock:
            if self._queue:
                head = self._queue[0]
                head.remaining -= 1
                if head.remaining == 0:
                    self._queue.popleft()
                return head.fault
            mix = self.faults
            if mix is None:
                return None
            if self._draws is None or self._draws[0] is not mix:
                self._draws = (mix, mix.draws())  # a new mix starts its own sequence
            kind = next(self._draws[1])
        return None if kind is None else mix.fault(kind)

    def _count(self, *, fault: Fault | None = None, rejected: bool = False) -> None:
        with self._lock:
            if fault is not None:
                faults = self._stats.faults
                faults[fault.label] = faults.get(fault.label, 0) + 1
            elif rejected:
                self._stats.rejected += 1
            else:
                self._stats.served += 1
                self._stats.last_reply_at = time.time()

    async def _ask_hook(self, body: dict[str, Any]) -> str | Fault:
        result = self.reply(body)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, (str, Fault)):
            raise TypeError(f"reply hook returned {type(result).__name__}, not str or Fault")
        return result
