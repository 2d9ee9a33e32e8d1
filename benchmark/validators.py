"""Checks shared by the config models of several packages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T", bound=str)


def distinct_choices(values: list[T], choices: Sequence[str]) -> list[T]:
    """A non-empty list with no value twice (the values' type already limits them to
    ``choices``, which the message names)."""
    if not values:
        raise ValueError(f"must list at least one of {', '.join(choices)}")
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise ValueError(f"lists {', '.join(dupes)} more than once")
    return values
