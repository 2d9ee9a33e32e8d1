"""Checks shared by the config models of several packages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import Field

T = TypeVar("T", bound=str)

# Upper bounds of the numeric settings: generous for any real use, so that past them a
# value is a slip (a digit too many) that would run for hours, not a setting to honour.
MAX_TOKENS = 100_000_000  # a context window or a token budget (the largest windows: ~10M)
MAX_COUNT = 1_000_000  # a number of things done per job (probes, samples, points, messages)
MAX_SESSIONS = 10_000  # sessions generated per job
MAX_WEIGHT = 1_000_000.0  # a rubric weight (only ratios between weights matter)
MAX_PRICE = 1_000_000.0  # dollars per million tokens
# A seed: what a 64-bit integer holds (SQLite, numpy and JSON readers all take it).
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1

Seed = Annotated[int, Field(ge=SEED_MIN, le=SEED_MAX)]
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]

# The pydantic error type of a check whose input must not be repeated (it may hold a
# credential): the config error formatter leaves out the "(got ...)" for it.
NO_ECHO = "no_echo"


def distinct_choices(values: list[T], choices: Sequence[str]) -> list[T]:
    """A non-empty list with no value twice (the values' type already limits them to
    ``choices``, which the message names)."""
    if not values:
        raise ValueError(f"must list at least one of {', '.join(choices)}")
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"lists {', '.join(dupes)} more than once")
    return values


def http_url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as an http(s) server address, or None.

    The message never repeats the URL, not even its scheme: it may hold a credential.
    """
    from urllib.parse import urlsplit

    if not url.strip():
        return "must be an http(s) URL such as http://localhost:8000/v1 (got an empty string)"
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an http(s) URL such as http://localhost:8000/v1"
    if parts.username is not None or parts.password is not None:
        return "must not hold credentials (user:pass@)"
    if not parts.hostname:
        return "must name a host, as in http://localhost:8000/v1"
    try:
        port = parts.port
    except ValueError:  # out of range, or not a number
        port = 0
    if port == 0:
        return "must have a port from 1 to 65535"
    return None
