"""Token and dollar accounting per role (summarizer, answerer, judge, probe writer)."""

from __future__ import annotations

import threading

from pydantic import BaseModel


class Usage(BaseModel):
    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.failures += other.failures
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd


class UsageLedger:
    """Thread-safe running totals per role; ``metrics()`` flattens them for tracking."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, Usage] = {}

    def record(self, role: str, usage: Usage) -> None:
        with self._lock:
            self._roles.setdefault(role, Usage()).add(usage)

    def roles(self) -> dict[str, Usage]:
        with self._lock:
            return {role: u.model_copy() for role, u in self._roles.items()}

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        total = Usage()
        for role, usage in self.roles().items():
            total.add(usage)
            for key, value in usage.model_dump().items():
                out[f"llm/{role}/{key}"] = value
        if self._roles:
            out["cost_usd"] = total.cost_usd
            out["llm/calls"] = total.calls
            out["llm/failures"] = total.failures
        return out
