"""How an LLM call fails, as its callers see it: one exception class per kind of end,
each message one line with no secret (the client builds them)."""

from __future__ import annotations

import openai

from benchmark.redaction import clip


class LLMError(Exception):
    """A call that failed after its retries; the message says why (no secrets)."""


class InvalidReplies(LLMError):
    """The endpoint replied, but the caller's ``parse`` refused every reply (after retries)."""


class EndpointUnreachable(LLMError):
    """No connection can be made to the endpoint (refused, DNS, unusable URL): every
    call on it fails at once with this message, which names the endpoint and base_url."""


class EndpointGivenUp(EndpointUnreachable):
    """The endpoint answered, but never usably, until its breaker gave it up
    (:mod:`benchmark.llm.breaker`): every call on it fails at once with this message,
    which names the role, the endpoint, its base_url and the last failure. An
    :class:`EndpointUnreachable` for its callers: out of reach of any usable reply."""


def failure_kind(exc: openai.APIError) -> str:
    """The SDK's name of a failure (ours of a timeout are the SDK's, with a better message)."""
    return "APITimeoutError" if isinstance(exc, openai.APITimeoutError) else type(exc).__name__


def describe_failure(exc: BaseException, key_names: tuple[str, ...] = ()) -> str:
    """One line on a failed call for its trace: a server's reply may echo a key (scrubbed)."""
    return f"{type(exc).__name__}: {clip(str(exc), 300, first_line=True, key_names=key_names)}"
