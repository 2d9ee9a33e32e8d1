"""The job's progress display: counts probes and LLM usage; plain lines off a terminal."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from benchmark.llm.usage import UsageLedger
from benchmark.run.progress import JobProgress


def test_log_mode_reports_counts_once_at_the_end(caplog):
    ledger = UsageLedger()
    ledger.record("judge", calls=3, cache_hits=2, retries=1, input_tokens=900, cost_usd=0.25)
    with (
        caplog.at_level(logging.INFO, logger="benchmark.run.progress"),
        JobProgress(ledger, mode="log") as progress,
    ):
        progress.add(2)
        progress.finished(failed=False)
        progress.finished(failed=True)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[-1] == (
        "2/2 probes | 1 failed | 3 calls | 2 cached | 1 retries | 0 call failures | "
        "900 tokens | $0.2500"
    )
    assert lines.count(lines[-1]) == 1  # the final state is not repeated on exit


def test_offline_job_shows_no_llm_figures():
    progress = JobProgress(UsageLedger(), mode="log")
    progress.add(1)
    assert progress.summary() == "0/1 probes | 0 failed"


def test_bar_mode_draws_and_finishes(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(
        "rich.progress.get_console", lambda: Console(file=out, force_terminal=True, width=120)
    )
    with JobProgress(UsageLedger(), mode="bar") as progress:
        progress.add(3)
        for _ in range(3):
            progress.finished(failed=False)
    assert progress.done == progress.total == 3
    assert "3/3" in out.getvalue()


def test_auto_is_log_off_a_terminal():
    assert JobProgress(UsageLedger(), mode="auto").mode == "log"  # pytest captures stderr
