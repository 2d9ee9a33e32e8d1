"""The user's own detectors (``redaction.patterns``): checked once at config time, bounded
in time at every search.

A pattern comes from the command line and runs over every text of every transcript; one
that backtracks without end (``(a+)+$`` on a long run of a's) would hold the job for hours
with no message. So it is compiled by the ``regex`` engine (``re``'s syntax), whose searches
take a ``timeout`` (``Rule.finditer``), and tried first on runs of its own characters, so
the usual such pattern is refused in one line before any work.
"""

from __future__ import annotations

import re
from typing import Any

import regex

from benchmark.redaction.detectors import (
    BUILTIN_NAMES,
    TYPE_NAME,
    Detector,
    Rule,
    not_reference,
)


def compile_pattern(name: str, source: str) -> Detector:
    """A user detector; ``ValueError`` (one line) for a bad name or regex."""
    if not TYPE_NAME.fullmatch(name):
        raise ValueError(f"type name {name!r}: use lowercase letters, digits and _")
    if name in BUILTIN_NAMES:
        raise ValueError(f"type name {name!r} is a built-in detector; choose another name")
    try:
        re.compile(source)  # Python's syntax, and its error messages
        # The ``regex`` engine (re's syntax) for its search timeout: see ``Rule.finditer``.
        pattern = regex.compile(source, regex.VERSION0)
    except (re.error, regex.error, OverflowError, RecursionError) as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    if pattern.search(""):
        raise ValueError("the pattern matches the empty string")
    _try_runs(pattern)
    return Detector(name, (Rule(pattern, not_reference, f"redaction.patterns.{name}"),))


_PROBE_TIMEOUT_S = 0.5
_PROBE_RUN = 2000


def _try_runs(pattern: Any) -> None:
    """A ``ValueError`` before any work for a pattern that backtracks without end on a long
    run of one of its own characters (``(a+)+$`` on ``aaa...!``), the usual way such a
    pattern meets a transcript; whatever this misses, ``Rule.finditer`` still bounds."""
    chars = sorted({c for c in pattern.pattern if c.isalnum()} | {"a"})[:12]
    for char in chars:
        try:
            pattern.search(char * _PROBE_RUN + "!", timeout=_PROBE_TIMEOUT_S)
        except TimeoutError:
            raise ValueError(
                f"the pattern backtracks without end on a run of {char!r} (a nested or "
                "overlapping repeat such as (a+)+ or (a|aa)+); rewrite it without one"
            ) from None
