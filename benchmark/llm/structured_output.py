"""How a structured request is asked for, and what changes when its reply is unusable.

**The ladder.** An endpoint's ``structured_output`` is the first of the ways to
ask for JSON that are tried; a server that refuses it is asked one rung lower:

    json_schema -> json_object_schema -> json_object -> none
    guided_json | structured_outputs  -> json_object -> none

``json_object_schema`` is JSON mode with the schema beside it (llama.cpp's
server enforces it with a grammar), ``guided_json`` and ``structured_outputs``
are vLLM's extra body fields (before and after its 0.12), ``none`` is plain
text with the schema in the system prompt. A refusal is any error status whose
body names the parameter, or a 400/422/5xx naming nothing on the first failing
request of a rung that has not worked yet, when that request then succeeds one
rung lower (tried once per rung: a server that is merely down costs one extra
request). A transient 500 after the rung has worked demotes nothing. The rung
is shared by every client of the endpoint, like its concurrency limit, and
each demotion is counted (``llm/<role>/fallbacks``).

**Repairs.** After an invalid reply the next try is never the same request:
a reply cut at ``max_tokens`` is asked again with twice the tokens (within the
endpoint's ``context_window``, when it declares one); otherwise the bad reply
goes back as the assistant's turn with a short user message quoting why it
could not be used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openai

from benchmark.llm.budget import room_for_reply
from benchmark.llm.endpoint import Endpoint, StructuredOutput, normalise_base_url
from benchmark.redaction import clip

if TYPE_CHECKING:
    from benchmark.llm.completion import Completion

# One rung down from each (None: the bottom).
LOWER: dict[str, StructuredOutput | None] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "guided_json": "json_object",
    "structured_outputs": "json_object",
    "json_object": "none",
    "none": None,
}
# An error body naming the structured-output parameter is a refusal of it.
_NAMES_FORMAT = re.compile(
    r"response_format|json_schema|json_object|schema|grammar|guided|structured_output", re.I
)
# Cached in place of a reply to a request the server refused (a rerun steps down unasked).
REFUSED = "refused"
# Statuses that say nothing about the request's format.
_NOT_FORMAT = frozenset({401, 403, 404, 408, 409, 429})
# Longest bad reply sent back in a repair (characters): the window has room for little more.
REPAIR_ECHO_CHARS = 2000
# A cut reply is asked again with this many times the tokens.
RAISE_FACTOR = 2


def refusal(exc: BaseException) -> str | None:
    """``"named"`` when ``exc`` refuses the format by name, ``"maybe"`` when it might
    (a 400, 422 or 5xx that names nothing), else None."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code in _NOT_FORMAT:
        return None
    if _NAMES_FORMAT.search(str(exc)):
        return "named"
    return "maybe" if exc.status_code in (400, 422) or exc.status_code >= 500 else None


def with_format(
    base: dict[str, Any], fmt: StructuredOutput, schema: dict[str, Any]
) -> dict[str, Any]:
    """``base`` (a chat body) asking for ``schema`` the way rung ``fmt`` does."""
    body = dict(base)
    if fmt == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": False},
        }
    elif fmt == "json_object_schema":
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif fmt == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif fmt == "guided_json":
        body["guided_json"] = schema
    elif fmt == "structured_outputs":
        body["structured_outputs"] = {"json": schema}
    else:  # none: the schema travels in the system prompt
        body["messages"] = schema_in_prompt(body["messages"], schema)
    return body


def schema_in_prompt(
    messages: list[dict[str, Any]], schema: dict[str, Any]
) -> list[dict[str, Any]]:
    """``messages`` with the reply's schema stated at the end of the system prompt (one is
    added first when there is none: some chat templates allow a system turn only first)."""
    note = "Reply with one JSON object only, valid against this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False, sort_keys=True
    )
    if messages and messages[0].get("role") == "system":
        first = messages[0]
        return [{**first, "content": f"{first.get('content') or ''}\n\n{note}"}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


@dataclass
class Ladder:
    """Where an endpoint stands: its rung, whether a request has worked on it, and whether
    the rung below was tried after an error that named nothing."""

    rung: StructuredOutput
    worked: bool = False
    probed: bool = False

    def demote(self, refused: StructuredOutput) -> bool:
        """Step down from ``refused`` (False when another request already has, or at the
        bottom): the caller counts only the True ones."""
        lower = LOWER[refused]
        if self.rung != refused or lower is None:
            return False
        self.rung, self.worked, self.probed = lower, False, False
        return True

    async def ask(
        self,
        base: dict[str, Any],
        schema: dict[str, Any],
        exchange: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
        refused: Callable[[dict[str, Any]], None],
        demoted: Callable[[], None],
    ) -> tuple[dict[str, Any], StructuredOutput]:
        """The reply to ``base`` with ``schema`` asked for at this rung, stepping down on
        each refusal; ``exchange`` sends a body (or replays it: a cached refusal is
        :data:`REFUSED`), ``refused`` caches a refused body, ``demoted`` counts a step."""
        while True:
            fmt = self.rung
            body = with_format(base, fmt, schema)
            try:
                value = await exchange(body)
            except openai.APIStatusError as exc:
                lower = LOWER[fmt]
                kind = None if lower is None else refusal(exc)
                if kind is None or (kind == "maybe" and (self.worked or self.probed)):
                    raise
                if kind == "maybe":  # a refusal only if the same request works one rung down
                    self.probed = True
                    try:
                        value = await exchange(with_format(base, lower, schema))  # type: ignore[arg-type]
                    except openai.APIError:
                        raise exc from None
                refused(body)
                if self.demote(fmt):
                    demoted()
                if kind == "named" or value.get(REFUSED):
                    continue
                fmt = lower  # type: ignore[assignment]
            if value.get(REFUSED):
                if self.demote(fmt):
                    demoted()
                continue
            if self.rung == fmt:
                self.worked = True
            return value, fmt


_LADDERS: dict[tuple[str, str, str], Ladder] = {}


def ladder_of(endpoint: Endpoint) -> Ladder:
    """The ladder shared by every client of ``endpoint`` (base_url, model, first rung)."""
    ident = (
        normalise_base_url(endpoint.base_url),
        endpoint.model,
        endpoint.structured_output,
    )
    ladder = _LADDERS.get(ident)
    if ladder is None:
        ladder = _LADDERS[ident] = Ladder(endpoint.structured_output)
    return ladder


def forget_ladders() -> None:
    """Start every endpoint from its configured rung again (the end of a job)."""
    _LADDERS.clear()


class Repair:
    """The request of one structured call as it stands after its invalid replies."""

    def __init__(
        self, messages: list[dict[str, Any]], max_tokens: int, context_window: int | None
    ) -> None:
        self.original = messages
        self.messages = messages
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.tries = 0

    def after(self, reply: Completion, problem: str) -> None:
        """Change the next request after ``reply`` proved unusable because of ``problem``."""
        self.tries += 1
        if reply.truncated:
            raised = self._raised(reply.input_tokens)  # the server's count of the prompt
            if raised > self.max_tokens:
                self.max_tokens = raised
                return
            problem = f"it was cut off at the {self.max_tokens}-token limit; be shorter"
        # The try number keeps two repairs of the same bad reply apart.
        note = (
            f"Your previous reply could not be used: {json.dumps(problem, ensure_ascii=False)}. "
            f"Reply again, in full, in exactly the format asked for (retry {self.tries})."
        )
        echo = clip(reply.text, REPAIR_ECHO_CHARS) or "(empty reply)"
        repaired = [
            *self.original,
            {"role": "assistant", "content": echo},
            {"role": "user", "content": note},
        ]
        if self.context_window is not None:
            # The repair adds tokens: within the window it takes up to half the reply's room,
            # and past that the bad reply is left out and only the reason is sent.
            if room_for_reply(self.context_window, repaired, 0) < self.max_tokens // 2:
                repaired = [*self.original, {"role": "user", "content": note}]
            room = room_for_reply(self.context_window, repaired, 0)
            self.max_tokens = max(1, min(self.max_tokens, room))
        self.messages = repaired

    def _raised(self, prompt_tokens: int) -> int:
        wanted = self.max_tokens * RAISE_FACTOR
        if self.context_window is None:
            return wanted
        # The server's count of the prompt, or ours with the margin, whichever is larger.
        return min(wanted, room_for_reply(self.context_window, self.messages, prompt_tokens))
