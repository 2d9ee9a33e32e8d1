"""The clients with an open connection pool, and what the end of a job forgets."""

from __future__ import annotations

from typing import Protocol

from benchmark.llm.breaker import forget_breakers
from benchmark.llm.reach import forget_all
from benchmark.llm.reply_scrub import use_redactor
from benchmark.llm.send_gate import reset_gate
from benchmark.llm.structured_output import forget_ladders


class _Closable(Protocol):
    def close(self) -> None: ...


_OPEN: set[_Closable] = set()  # clients with an open pool, until closed


def opened(client: _Closable) -> None:
    _OPEN.add(client)


def closed(client: _Closable) -> None:
    _OPEN.discard(client)


def close_all() -> None:
    """Close every client's connection pool and forget which endpoints were unreachable
    (end of a job, end of a test): the next job tries them again."""
    for client in list(_OPEN):
        client.close()
    forget_all()
    forget_breakers()
    forget_ladders()
    use_redactor(None)
    reset_gate()
