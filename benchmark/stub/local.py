"""The stub's ``local`` mode: a llama.cpp-class server with a small model behind it.

Self-hosted servers differ from the hosted API in ways that break a client built
for the latter, and this mode reproduces each of them over real HTTP:

* ``response_format`` ``json_schema`` is refused with HTTP **500** (an older
  llama.cpp build), not 400;
* JSON mode takes a schema (``{"type": "json_object", "schema": {...}}``) and a
  "grammar" keeps the reply to the schema's structure, but not to its numeric
  bounds (a score of 7 on a 0-5 scale, now and then); plain JSON mode without
  a schema gets JSON of the wrong shape (``{"answer": "..."}``), as from a small
  model that was never told the shape;
* a reply longer than ``max_tokens`` is cut there, with ``finish_reason: length``;
* a fixed context window, counted with the server's own tokenizer (not cl100k):
  a prompt plus ``max_tokens`` over it is HTTP 400;
* one request generates at a time (the rest queue), optionally at a set speed;
* any model name is accepted, though ``GET /v1/models`` lists one.

It counts what a test needs to check the client against it (:class:`LocalStats`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from benchmark.stub.chat_route import completion, message_text
from benchmark.stub.faults import Fault
from benchmark.stub.responses import CREATED

Ask = Callable[[dict[str, Any]], Awaitable["str | Fault"]]
Sleep = Callable[[float], Awaitable[None]]


class LocalMode(BaseModel):
    """Settings of the local mode (``OpenAIStub(local=LocalMode(...))``, ``--local``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field("local-model.gguf", min_length=1, description="the one name listed")
    context_window: int = Field(8192, gt=0, description="prompt + max_tokens must fit")
    chars_per_token: float = Field(3.2, gt=0, description="the server's tokenizer: chars/this")
    message_overhead: int = Field(4, ge=0, description="chat-template tokens per message")
    tokens_per_s: float = Field(0.0, ge=0, description="generation speed; 0 = instant")
    out_of_bounds_every: int = Field(
        3, ge=0, description="about one schema reply in this many breaks a bound; 0 = none"
    )


class LocalStats(BaseModel):
    """What the local mode saw and did, since the stub started."""

    requests: int = Field(0, description="chat requests received")
    served: int = 0
    json_schema_refused: int = Field(0, description="HTTP 500 on response_format json_schema")
    over_window: int = Field(0, description="HTTP 400: prompt + max_tokens over the window")
    length_stops: int = Field(0, description="replies cut at max_tokens")
    out_of_bounds: int = Field(0, description="schema replies with a number past its bound")
    wrong_shape: int = Field(0, description="JSON-mode replies sent without a schema")
    resent_after_invalid: int = Field(
        0, description="requests identical to one whose reply was invalid"
    )
    max_busy: int = Field(0, description="most requests generating at once (1: they queue)")


@dataclass(frozen=True)
class Generated:
    """One reply of the local model, before it is wrapped as a completion."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int


def error_response(status: int, message: str, type_: str, **extra: Any) -> web.Response:
    """An error in llama.cpp's shape (``code`` inside ``error``, no ``param``)."""
    return web.json_response(
        {"error": {"code": status, "message": message, "type": type_, **extra}}, status=status
    )


def request_key(body: dict[str, Any]) -> str:
    """A digest of the whole body: two requests with the same key are identical."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def attached_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The schema JSON mode carries (llama.cpp's ``json_object`` + ``schema``), if any."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        schema = fmt.get("schema")
        return schema if isinstance(schema, dict) and schema else None
    return None


class LocalServer:
    """The local mode's state for one run of the stub (made when the stub starts)."""

    def __init__(self, mode: LocalMode) -> None:
        self.mode = mode
        self._stats = LocalStats()
        self._counts = threading.Lock()  # stats are read from other threads
        self._slot = asyncio.Lock()  # made on the server's loop; one generation at a time
        self._busy = 0
        self._invalid: set[str] = set()  # keys of requests whose reply was invalid

    # -- inspection -----------------------------------------------------------------------

    def stats(self) -> LocalStats:
        with self._counts:
            return self._stats.model_copy()

    def models(self) -> dict[str, Any]:
        """``GET /v1/models``: the one model loaded (though any name is answered)."""
        entry = {"id": self.mode.model, "object": "model", "created": CREATED}
        return {"object": "list", "data": [{**entry, "owned_by": "llamacpp"}]}

    # -- tokens ---------------------------------------------------------------------------

    def tokens(self, text: str) -> int:
        """The server's count of ``text`` (a tokenizer unlike cl100k, on purpose)."""
        return math.ceil(len(text) / self.mode.chars_per_token)

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        per_message = self.mode.message_overhead
        return sum(self.tokens(message_text(m)) + per_message for m in messages) + per_message

    @staticmethod
    def reply_cap(body: dict[str, Any]) -> int | None:
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        return cap if isinstance(cap, int) and cap > 0 else None

    # -- one request ----------------------------------------------------------------------

    def refusal(self, body: dict[str, Any]) -> web.Response | None:
        """The error the server answers before generating, if any (counts the request)."""
        key = request_key(body)
        with self._counts:
            self._stats.requests += 1
            if key in self._invalid:
                self._stats.resent_after_invalid += 1
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in (None, "text", "json_object"):
            self._count("json_schema_refused")
            return error_response(
                500,
                f'response_format type must be one of "text" or "json_object", but got: {kind}',
                "server_error",
            )
        prompt = self.prompt_tokens(body)
        needed = prompt + (self.reply_cap(body) or 1)
        if needed > self.mode.context_window:
            self._count("over_window")
            return error_response(
                400,
                "the request exceeds the available context size, try increasing it",
                "exceed_context_size_error",
                n_prompt_tokens=prompt,
                n_ctx=self.mode.context_window,
            )
        return None

    async def generate(self, body: dict[str, Any], ask: Ask, sleep: Sleep) -> Generated | Fault:
        """The model's reply, made while holding the one slot (other requests wait)."""
        async with self._slot:
            with self._counts:
                self._busy += 1
                self._stats.max_busy = max(self._stats.max_busy, self._busy)
            try:
                return await self._generate(body, ask, sleep)
            finally:
                with self._counts:
                    self._busy -= 1

    async def _generate(self, body: dict[str, Any], ask: Ask, sleep: Sleep) -> Generated | Fault:
        text = await ask(body)
        if isinstance(text, Fault):
            return text
        key = request_key(body)
        flaws: list[str] = []
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_object":
            schema = attached_schema(body)
            if schema is None:
                text = json.dumps({"answer": " ".join(text.split())[:200]})
                flaws.append("wrong_shape")
            else:
                text, broke = self._grammar(text, schema, key)
                flaws += ["out_of_bounds"] if broke else []
        prompt = self.prompt_tokens(body)
        cap = self.reply_cap(body) or max(self.mode.context_window - prompt, 1)
        finish = "stop"
        if self.tokens(text) > cap:
            text = text[: int(cap * self.mode.chars_per_token)]
            finish = "length"
            flaws.append("length_stops")
        produced = self.tokens(text)
        if self.mode.tokens_per_s > 0:
            await sleep(produced / self.mode.tokens_per_s)
        with self._counts:
            self._stats.served += 1
            for flaw in flaws:
                setattr(self._stats, flaw, getattr(self._stats, flaw) + 1)
            if flaws:
                self._invalid.add(key)
        return Generated(text, finish, prompt, produced)

    def completion(self, body: dict[str, Any], reply: Generated, serial: int) -> dict[str, Any]:
        """The ChatCompletion payload, with this server's token counts and finish reason."""
        payload = completion(body, reply.text, serial)
        payload["choices"][0]["finish_reason"] = reply.finish_reason
        payload["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
        return payload

    def _grammar(self, text: str, schema: dict[str, Any], key: str) -> tuple[str, bool]:
        """``text`` held to ``schema``'s structure; ``True`` when a bound was broken.

        The model's reply is kept when it already has the structure, else replaced by
        the smallest value that has it. Bounds are not part of the grammar: for about
        one request in ``out_of_bounds_every`` (fixed by the request, so a resend gets
        the same), the first number with a ``maximum`` goes past it.
        """
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not conforms(value, schema):
            value = skeleton(schema)
        every = self.mode.out_of_bounds_every
        broke = every > 0 and int(key[:8], 16) % every == 0 and _break_bound(value, schema)
        return json.dumps(value), broke

    def _count(self, field: str) -> None:
        with self._counts:
            setattr(self._stats, field, getattr(self._stats, field) + 1)


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def conforms(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` has ``schema``'s structure (types, enums, required and allowed
    keys, items); numeric and length bounds are deliberately not checked."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        if not isinstance(value, _TYPES[kind]):
            return False
        if isinstance(value, bool) and kind in ("integer", "number"):
            return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        return all(conforms(value[k], s) for k, s in properties.items() if k in value)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(conforms(item, schema["items"]) for item in value)
    return True


def skeleton(schema: dict[str, Any]) -> Any:
    """The smallest value with ``schema``'s structure (what a grammar forces out of a
    model that had no idea what to say)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: skeleton(properties.get(k, {})) for k in schema.get("required", [])}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return ""


def _break_bound(value: Any, schema: dict[str, Any]) -> bool:
    """Push the first number under a ``maximum`` past it, in place; ``False`` if none."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name, sub in properties.items():
            if name not in value:
                continue
            if _is_bounded_number(value[name], sub):
                value[name] = sub["maximum"] + 2
                return True
            if _break_bound(value[name], sub):
                return True
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            if _is_bounded_number(item, schema["items"]):
                value[i] = schema["items"]["maximum"] + 2
                return True
            if _break_bound(item, schema["items"]):
                return True
    return False


def _is_bounded_number(value: Any, schema: dict[str, Any]) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and isinstance(schema.get("maximum"), (int, float))
