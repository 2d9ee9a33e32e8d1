"""A job's progress: a live bar on a terminal, plain log lines anywhere else.

It counts probes (answered and judged, or failed) and shows what the LLM
layer has spent so far: calls, cache hits, retries, failures, tokens and
dollars, read from the job's usage ledger.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from types import TracebackType
from typing import Literal

from benchmark.llm.usage import UsageLedger

log = logging.getLogger("benchmark.run.progress")
Mode = Literal["auto", "bar", "log", "off"]
LOG_EVERY_S = 10.0


class JobProgress:
    """Thread-safe: probes finish on the LLM loop while the main thread compacts."""

    def __init__(self, ledger: UsageLedger, mode: Mode = "auto", label: str = "probes") -> None:
        if mode == "auto":
            mode = "bar" if sys.stderr.isatty() else "log"
        self.mode = mode
        self.ledger = ledger
        self.label = label
        self.total = 0
        self.done = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._last_log = 0.0
        self._logged: tuple[int, int] | None = None  # (done, total) of the last log line
        self._bar = None
        self._task = None

    def __enter__(self) -> JobProgress:
        if self.mode == "bar":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[stats]}"),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=0, stats="")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._update_bar()
            self._bar.stop()
        elif self.mode == "log" and self.total and self._logged != (self.done, self.total):
            log.info("%s", self.summary())

    def add(self, probes: int) -> None:
        """More probes are scheduled (the total grows point by point)."""
        with self._lock:
            self.total += probes
        self._refresh()

    def finished(self, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.failed += int(failed)
        self._refresh()

    def summary(self) -> str:
        m = self.ledger.metrics()
        parts = [f"{self.done}/{self.total} {self.label}", f"{self.failed} failed"]
        if m.get("llm/calls") or m.get("llm/cache_hits"):
            tokens = int(m.get("llm/input_tokens", 0) + m.get("llm/output_tokens", 0))
            parts += [
                f"{int(m.get('llm/calls', 0))} calls",
                f"{int(m.get('llm/cache_hits', 0))} cached",
                f"{int(m.get('llm/retries', 0))} retries",
                f"{int(m.get('llm/failures', 0))} call failures",
                f"{tokens:,} tokens",
                f"${m.get('llm/cost_usd', 0.0):.4f}",
            ]
        return " | ".join(parts)

    def _refresh(self) -> None:
        if self._bar is not None:
            self._update_bar()
        elif self.mode == "log":
            now = time.monotonic()
            with self._lock:
                due = now - self._last_log >= LOG_EVERY_S or (self.done == self.total > 0)
                if due:
                    self._last_log = now
                    self._logged = (self.done, self.total)
            if due:
                log.info("%s", self.summary())

    def _update_bar(self) -> None:
        stats = " | ".join(self.summary().split(" | ")[1:])
        self._bar.update(self._task, total=self.total, completed=self.done, stats=stats)
