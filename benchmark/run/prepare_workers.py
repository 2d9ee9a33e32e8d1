"""Points prepared in worker processes while the calls of points prepared earlier run.

Loading a session (generating or importing it, redacting it), extracting its probes and
compacting it is CPU work: on the job's own threads it would hold the interpreter the
LLM loop needs, so an LLM job did all of it first and only then made its calls. Here
each transcript is prepared in a worker process (``prepare_source``); the job receives
its points in order (the context rendered for the calls already) and submits their
probes at once, so calls start with the first point and the preparation of the others
runs beside them. The results equal the in-process path's: the same functions run, and
points are taken in the same order.

Workers start with SIGINT, SIGTERM and SIGHUP blocked (a Ctrl-C at the terminal is the
job's to handle; it stops them) and die with the job (``PR_SET_PDEATHSIG`` on Linux).
Their log records are sent back with each transcript and logged here, in order.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.llm.prompting import adopt_prepared
from benchmark.redaction import redactor_for
from benchmark.run.parts import Parts, build_policy
from benchmark.run.preparation import compaction_points, prepare_points
from benchmark.run.scheduling import ScheduledPoint
from benchmark.transcript.manifest import SkippedFile, SourceFile
from benchmark.transcript.sources import Source, TranscriptStream

AUTO_MAX = 8  # worker processes at most, with prepare_workers=auto
AUTO_MIN_TOKENS = 1_000_000  # below this, starting workers costs more than it saves
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class PreparedSource:
    """One source as a worker prepared it: its manifest entry and its points."""

    entry: SourceFile | SkippedFile
    transcript_id: str | None = None
    tokens: int = 0
    compacts: bool = False
    points: list[ScheduledPoint] = field(default_factory=list)
    repeated: int = 0
    records: list[logging.LogRecord] = field(default_factory=list)


def worker_count(
    config: BenchmarkConfig, parts: Parts, concurrent: bool, stream: TranscriptStream
) -> int:
    """How many worker processes prepare this job's points (0: the job's own process).

    Only an LLM job overlaps preparation with its calls (an offline job has none to
    overlap), and only when preparing needs no model: a probe writer or policy that calls
    one makes its calls from the job's LLM loop. ``auto`` also wants enough to prepare.
    """
    wanted = config.execution.prepare_workers
    if not concurrent or wanted == 0 or parts.writer is not None or uses_model(parts.policy):
        return 0
    found = stream.found
    sources = len(found.files) if found is not None else stream.config.sessions  # type: ignore[union-attr]
    if wanted != "auto":
        return min(int(wanted), sources)
    if sources < 2 or _tokens_estimate(stream) < AUTO_MIN_TOKENS:
        return 0
    return min(_cpus(), AUTO_MAX, sources)


def uses_model(policy: Any) -> bool:
    """Whether compacting calls a model (the policy's own client, or its summarizer's)."""
    return any(
        getattr(part, "client", None) is not None
        for part in (policy, getattr(policy, "summarizer", None))
    )


class PreparePool:
    """``workers`` processes preparing a job's sources, handed back in order."""

    def __init__(self, config: BenchmarkConfig, workers: int, render: bool) -> None:
        self.workers = workers
        self.render = render
        levels = {
            name: logger.level
            for name, logger in logging.root.manager.loggerDict.items()
            if isinstance(logger, logging.Logger) and logger.level
        }
        levels[""] = logging.root.level
        self._pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(config, levels),
        )

    def prepared(self, stream: TranscriptStream) -> Iterator[PreparedSource]:
        """Each of ``stream``'s sources prepared, in order, entered in its manifest. All are
        queued at once: the workers go on while the caller waits (for the tracking store
        before the first call, say), and what they prepare is held here either way, until
        its calls are done."""
        stream.announce()
        ahead = deque(self._submit(source) for source in stream.sources())
        while ahead:
            try:
                prepared = ahead.popleft().result()
            except BrokenProcessPool:
                raise UserError(
                    "a worker process preparing points ended abruptly (killed, or out of "
                    "memory?); execution.prepare_workers=0 prepares them in the job's process"
                ) from None
            # Its points live as long as the job: frozen, so the collector, which unpickling
            # them set going, does not scan them again at every full collection.
            gc.freeze()
            for record in prepared.records:
                logger = logging.getLogger(record.name)
                if logger.isEnabledFor(record.levelno):
                    logger.handle(record)
            prepared.records = []
            stream.accept_entry(prepared.entry)
            for point in prepared.points:
                if point.rendered is not None:
                    adopt_prepared(point.rendered)
                    point.rendered = None
            yield prepared
        stream.finish()

    def _submit(self, source: Source) -> Future[PreparedSource]:
        """Submit with the job's stop signals blocked: a worker started now inherits the
        mask, so a Ctrl-C reaches the job alone (held here until the mask is restored)."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            return self._pool.submit(prepare_source, source, self.render)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def close(self, stop: bool = False) -> None:
        """Let the workers go (they exit in the background: every source is prepared);
        ``stop`` (a signal, an error): drop what they were doing, and wait for them."""
        if not stop:
            self._pool.shutdown(wait=False)
            return
        processes = list(getattr(self._pool, "_processes", {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        for process in processes:
            with contextlib.suppress(Exception):
                process.join(5)


# --- in the worker process -------------------------------------------------------------

_WORKER: dict[str, Any] = {}


class _Collect(logging.Handler):
    """Keeps a worker's log records, made plain (message formatted, no traceback
    objects) so they pickle, until its transcript goes back to the job."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None
        record.exc_info = record.exc_text = record.stack_info = None
        self.records.append(record)


def _start_worker(config: BenchmarkConfig, levels: dict[str, int]) -> None:
    for signum in _SIGNALS:  # blocked already; ignored too, should anything unblock them
        signal.signal(signum, signal.SIG_IGN)
    _die_with_parent()
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    collect = _Collect()
    root.addHandler(collect)
    for name, level in levels.items():
        logging.getLogger(name or None).setLevel(level)
    _WORKER.update(
        config=config,
        collect=collect,
        stream=TranscriptStream(config.transcript, redactor_for(config), config.cache_path),
        policy=build_policy(config),
    )


def prepare_source(source: Source, render: bool) -> PreparedSource:
    """In a worker: load ``source`` and prepare its points (``prepare_points``)."""
    config: BenchmarkConfig = _WORKER["config"]
    collect: _Collect = _WORKER["collect"]
    collect.records = []
    loaded = _WORKER["stream"].load(source)
    transcript = loaded.transcript
    if transcript is None:
        return PreparedSource(loaded.entry, records=collect.records)
    points = compaction_points(transcript, config.compaction)
    scheduled, repeated = prepare_points(
        config, transcript, points, _WORKER["policy"], None, render
    )
    return PreparedSource(
        loaded.entry,
        transcript.id,
        transcript.total_tokens,
        bool(points),
        scheduled,
        repeated,
        collect.records,
    )


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when the job's process dies (even SIGKILL)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the job died before the line above
            os._exit(0)


def _tokens_estimate(stream: TranscriptStream) -> int:
    """What the job's sources hold, roughly: generated sessions' target size, or the
    files' bytes / 4 (a file that cannot be read counts 0: loading it says why)."""
    found = stream.found
    if found is None:
        config = stream.config
        return config.sessions * config.target_tokens  # type: ignore[union-attr]
    total = 0
    for path in found.files:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total // 4


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
