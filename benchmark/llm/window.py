"""Fitting a whole request into an endpoint's ``context_window``: one rule for every role.

A server rejects (or silently truncates) a prompt whose tokens plus the reply's
``max_tokens`` exceed its window. Bounding only the rendered context is not
enough: the instructions, the question, the reply under test and the JSON
escaping all count too. So each role describes its request as two functions,
``render(budget)`` (the context within ``budget`` tokens, newest part kept) and
``build(context)`` (the messages around it), and :meth:`Window.fit` finds the
largest context for which the whole request fits.

Our counts are cl100k (:mod:`benchmark.text.tokens`); the server's tokenizer and
chat template differ, typically by a few percent, more on code and non-English
text. So a request must fit with a margin: its counted tokens times
``1 + WINDOW_MARGIN_RATIO``, plus ``WINDOW_MARGIN_TOKENS`` for the template
and any schema the server puts into the prompt, plus ``max_tokens``, must not
exceed the window. A request that cannot fit even with no context is not
sent: the call fails with one line and is counted (``llm/<role>/too_long``).
A clipped context is counted as well (``llm/<role>/clipped``, and the request
tokens it lost in ``llm/<role>/clipped_tokens``).

An endpoint with no ``context_window`` (the default) keeps the role's
``max_context_tokens`` bound alone, with no counting at all.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from benchmark.llm.budget import WINDOW_MARGIN_RATIO, WINDOW_MARGIN_TOKENS, chat_tokens
from benchmark.llm.client import LLMError
from benchmark.llm.usage import UsageLedger
from benchmark.text import tokens

if TYPE_CHECKING:
    from benchmark.llm.endpoint import Endpoint

# Tries at shrinking the context before falling back to none (each try re-renders).
_FIT_TRIES = 8

log = logging.getLogger(__name__)

C = TypeVar("C")  # a rendered context
R = TypeVar("R")  # a request (chat messages, Responses API items)


class TooLongForWindow(LLMError):
    """The request does not fit the endpoint's window even with no context: never sent."""


def prompt_room(endpoint: Endpoint) -> int | None:
    """The most cl100k prompt tokens a request to ``endpoint`` may count (None: unbounded)."""
    if endpoint.context_window is None:
        return None
    spare = endpoint.context_window - endpoint.max_tokens - WINDOW_MARGIN_TOKENS
    return max(0, math.floor(spare / (1 + WINDOW_MARGIN_RATIO)))


class Window:
    """The window of one endpoint in one role, counting its clips in the role's ledger."""

    def __init__(self, endpoint: Endpoint, role: str, ledger: UsageLedger) -> None:
        self.endpoint = endpoint
        self.role = role
        self.ledger = ledger
        self._told = False  # the first clip is logged, the rest only counted

    def fit(
        self,
        cap: int,
        render: Callable[[int], C],
        build: Callable[[C], R],
        *,
        schema: Mapping[str, Any] | None = None,
        measure: Callable[[R], int] = chat_tokens,
    ) -> R:
        """The request with the largest context (at most ``cap`` tokens) that fits.

        ``measure`` counts a request's prompt tokens; a ``schema`` sent with it is
        counted too, as servers that take it in the prompt do. Raises
        :class:`TooLongForWindow` (counted) when even ``render(0)`` does not fit.
        """
        full = build(render(cap))
        room = prompt_room(self.endpoint)
        if room is None:
            return full
        room -= tokens.count(json.dumps(schema)) if schema is not None else 0
        full_tokens = measure(full)
        if full_tokens <= room:
            return full
        least = build(render(0))
        least_tokens = measure(least)
        if least_tokens > room:
            self.ledger.record(self.role, failures=1, too_long=1)
            raise TooLongForWindow(self._too_long(least_tokens, room))
        budget = min(cap, room - least_tokens)
        for _ in range(_FIT_TRIES):
            if budget <= 0:
                break
            request = build(render(budget))
            used = measure(request)
            if used <= room:
                return self._clipped(request, full_tokens - used)
            budget -= used - room  # the overshoot, in request tokens
        return self._clipped(least, full_tokens - least_tokens)

    def check(self, request: R, measure: Callable[[R], int] = chat_tokens, **kw: Any) -> R:
        """``request`` (which has no context to clip) when it fits, else TooLongForWindow."""
        return self.fit(0, lambda _: None, lambda _: request, measure=measure, **kw)

    def _clipped(self, request: R, lost: int) -> R:
        self.ledger.record(self.role, clipped=1, clipped_tokens=max(0, lost))
        if not self._told:
            self._told = True
            log.warning(
                "%s: contexts are clipped to fit endpoint '%s' context_window=%d with "
                "max_tokens=%d (counted in llm/%s/clipped)",
                self.role,
                self.endpoint.name,
                self.endpoint.context_window,
                self.endpoint.max_tokens,
                self.role,
            )
        return request

    def _too_long(self, least: int, room: int) -> str:
        e = self.endpoint
        return (
            f"{self.role} request not sent: endpoint '{e.name}' ({e.model}) has "
            f"context_window={e.context_window}, but its prompt with no context counts "
            f"~{least} tokens (room: {room} after max_tokens={e.max_tokens} and the "
            f"{WINDOW_MARGIN_RATIO:.0%} + {WINDOW_MARGIN_TOKENS} margin); lower max_tokens or "
            "raise context_window"
        )
