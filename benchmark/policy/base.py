"""The policy interface: how a user plugs in a compaction method.

A policy is any object with ``compact(segments) -> list[Message]``. It gets the
protected head, the region to compact and the protected tail of one
compaction point, and returns the messages the agent keeps. Configure it with
Hydra::

    # conf/policy/mine.yaml
    name: mine
    _target_: mypkg.MyPolicy
    keep_tokens: 4000        # passed to MyPolicy(keep_tokens=4000)

``name`` labels the run; it is never shown to the answerer or the judge. A
parameter out of range raises ``ValueError`` naming it (:func:`check_int`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message


@runtime_checkable
class Policy(Protocol):
    def compact(self, segments: Segments) -> list[Message]: ...


def check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value
