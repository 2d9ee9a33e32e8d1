"""K samples of one judgment as K real requests: a reply cache keyed per sample.

The LLM reply cache keys a request by its content, so asking the same judge the
same thing K times would replay one reply K times and every judge would look
perfectly consistent. The audit therefore builds the judge once per sample,
exactly as a job builds it (``parts.build`` from ``config.judge``), each
with a view of the job's cache whose keys carry the sample index. The judge
sends the same request K times and each reply is stored under its own sample,
so an audit rerun still replays everything and makes no call. Normal jobs use
the plain cache: their keys are unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.config.rules import check_judge_criteria
from benchmark.config.schema import BenchmarkConfig
from benchmark.judge.base import Judge
from benchmark.llm import UsageLedger
from benchmark.llm.reply_cache import CacheMode, ResponseCache
from benchmark.run.parts import build


class SampleCache(ResponseCache):
    """The reply cache file of a job, with every key salted by the audit sample index."""

    def __init__(self, folder: str | Path, mode: CacheMode, sample: int) -> None:
        super().__init__(folder, mode)
        self.sample = sample

    def salted(self, key: str) -> str:
        return hashlib.sha256(f"{key}\naudit-sample={self.sample}".encode()).hexdigest()

    def get(self, key: str, attempt: int = 0) -> dict[str, Any] | None:
        return super().get(self.salted(key), attempt)

    def put(
        self, key: str, attempt: int, value: Mapping[str, Any], *, model: str = "", role: str = ""
    ) -> None:
        super().put(self.salted(key), attempt, value, model=model, role=role)


def sample_cache(config: BenchmarkConfig, sample: int) -> SampleCache | None:
    """Sample ``sample``'s view of the job's reply cache; None when caching is off."""
    if not config.cache.dir or config.cache.mode == "off":
        return None
    return SampleCache(config.cache.dir, config.cache.mode, sample)


@dataclass
class SampleJudges:
    """The judge built once per sample, and the cache views they write to."""

    judges: list[Judge]
    caches: list[SampleCache]
    ledger: UsageLedger

    @property
    def concurrent(self) -> bool:
        """Whether the judges run on the LLM loop (they have ``ajudge``)."""
        return any(hasattr(j, "ajudge") for j in self.judges)

    def close(self) -> None:
        for judge in self.judges:
            close = getattr(judge, "close", None)
            if callable(close):
                close()
        for cache in self.caches:
            cache.close()


def build_judges(config: BenchmarkConfig, samples: int, ledger: UsageLedger) -> SampleJudges:
    """One judge per sample, built from ``config.judge`` as a job builds it (a missing key or
    a rubric the judge cannot score fails here, before any work)."""
    built = SampleJudges(judges=[], caches=[], ledger=ledger)
    try:
        for k in range(samples):
            cache = sample_cache(config, k)
            if cache is not None:
                built.caches.append(cache)
            judge = build(config.judge, "judge", "judge", ledger=ledger, cache=cache)
            built.judges.append(judge)
            if k == 0:
                check_judge_criteria(config, judge)
    except BaseException:
        built.close()
        raise
    return built
