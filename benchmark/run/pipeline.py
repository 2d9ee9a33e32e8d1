"""The job loop, stage by stage: a reader can follow it top to bottom.

transcripts -> compaction points -> probes (region only) -> policy.compact ->
answerer (compacted context only) -> judge (blind) -> rubric roll-up.
The parts come from ``benchmark.run.parts``; compaction and the probes in flight are
run by ``benchmark.run.scheduling``; each probe is evaluated by ``benchmark.run.evaluation``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import wait as futures_wait
from typing import Any

from benchmark.config.schema import BenchmarkConfig
from benchmark.judge.measured import not_measured
from benchmark.llm import close_all, send_gate
from benchmark.llm.loop import cancel_all
from benchmark.llm.prompting import adopt_prepared, forget_prepared
from benchmark.redaction import redactor_for
from benchmark.run import interrupt
from benchmark.run.interrupt import JobInterrupted
from benchmark.run.parts import Parts, build_parts
from benchmark.run.preparation import Compacting, compaction_points, prepare_points
from benchmark.run.prepare_workers import PreparePool, worker_count
from benchmark.run.progress import JobProgress
from benchmark.run.results import JobResult, PointResult
from benchmark.run.scheduling import ProbeScheduler, ScheduledPoint, failed_future
from benchmark.scoring.clusters import shared_task_warning
from benchmark.transcript.manifest import TranscriptManifest
from benchmark.transcript.sources import TranscriptStream

log = logging.getLogger(__name__)


def run_job(
    config: BenchmarkConfig,
    parts: Parts | None = None,
    sink: Callable[[PointResult], PointResult] | None = None,
    before_calls: Callable[[], None] | None = None,
    store_ready: Callable[[], bool] | None = None,
) -> JobResult:
    """Compact point by point on this thread; then answer and judge every probe concurrently.

    Transcripts stream in one at a time (``TranscriptStream``) and are let go once their
    points are prepared. With LLM stages, probe extraction and compaction (CPU) run
    first, for every point; only then are all probes scheduled, so the LLM loop runs at
    the speed of the network with no CPU-bound stage competing for the interpreter, and
    each probe's judgment starts when its own answer is in (no barrier between stages).
    Offline stages run inline, transcript by transcript, so only one transcript's
    contexts are held at a time. Results are
    collected in schedule order, so the outcome does not depend on timing.
    A probe repeated at a later point of its session is asked once; each probe
    records its facts' survival in the context, and with ``control=true`` its
    answer and judgment from the uncompacted session too. Ctrl-C cancels the calls in
    flight and raises ``JobInterrupted`` holding the probes finished so far.
    Each point, once all its probes are in, goes through ``sink`` (``RunFiles.point``:
    written to files, kept lean), so the job does not hold every context and reply.
    ``before_calls`` runs once, before the first probe's answer and judgment calls (the
    tracking store, opened while the points were prepared, must be ready for them). With
    worker processes and ``store_ready`` (the same, without waiting), points' probes are
    submitted as they arrive and only requests to a server wait for the store
    (``benchmark.llm.send_gate``): the reply cache answers at once.
    """
    parts = parts or build_parts(config)
    job = _Job(config, parts, sink)
    job.before_calls, job.store_ready = before_calls, store_ready
    try:
        job.run()
    except KeyboardInterrupt:
        interrupt.arm_second()  # a second signal now ends at once
        job.stop_workers()
        raise JobInterrupted(job.stop()) from None
    finally:
        job.stop_workers()
        close_all()
        forget_prepared()
    return job.result(job.points)


class _Job:
    """One job's state as it runs, so that Ctrl-C at any moment leaves what was done."""

    def __init__(
        self,
        config: BenchmarkConfig,
        parts: Parts,
        sink: Callable[[PointResult], PointResult] | None = None,
    ) -> None:
        self.config = config
        self.parts = parts
        self.sink = sink or (lambda point: point)
        self.stream: TranscriptStream | None = None
        self.unmeasured = not_measured(config.rubric, parts.judge, parts.answerer)
        self.repeated = 0  # probes asked again at a later point of their session, dropped
        self.pool: PreparePool | None = None  # worker processes preparing points
        self.pending: list[ScheduledPoint] = []
        self.points: list[PointResult] = []
        self.render_ahead = False  # LLM stages: render each context before the calls start
        self.before_calls: Callable[[], None] | None = None
        self.calls_started = False  # said once, in the log: the LLM phase starts
        self.store_ready: Callable[[], bool] | None = None
        self.held: Callable[[], None] | None = None  # requests held until this returns
        self.overlap = False  # points' calls start while later points are prepared

    def run(self) -> None:
        config, parts = self.config, self.parts
        log.info("loading transcripts")
        self.stream = TranscriptStream(config.transcript, redactor_for(config), config.cache_path)
        scheduler = ProbeScheduler(
            parts,
            config.rubric,
            config.execution.max_probes_in_flight,
            rollup=config.rubric.without(self.unmeasured),
            policy=config.policy.name,
        )
        arms = 2 if config.control else 1
        self.render_ahead = scheduler.concurrent
        workers = worker_count(config, parts, scheduler.concurrent, self.stream)
        self.overlap = bool(workers)
        compacting = Compacting(config.compaction)
        prepared = [0, 0]  # points, probes
        with JobProgress(parts.ledger, config.execution.progress) as progress:
            # One transcript at a time, let go once its points are prepared. Offline stages
            # run inline: each transcript's points are evaluated and written (their contexts
            # let go) before the next transcript loads. LLM stages: in worker processes, each
            # point's calls start as it arrives while the workers prepare the next; in this
            # process, CPU first (every point's probes and compacted context with no call in
            # flight, so the CPU work never starves the LLM loop), then every probe at once.
            for fresh, repeated in self._prepared(workers, compacting):
                self.repeated += repeated
                for scheduled in fresh:
                    progress.add(len(scheduled.probes) * arms)
                    if scheduled.rendered is not None:
                        adopt_prepared(scheduled.rendered)
                        scheduled.rendered = None
                self.pending.extend(fresh)  # from here on, Ctrl-C accounts for them
                prepared[0] += len(fresh)
                prepared[1] += sum(len(s.probes) for s in fresh)
                if workers or not scheduler.concurrent:
                    for scheduled in fresh:
                        self._submit(scheduled, scheduler, progress)
                self._store_open(wait=False)
                if workers or not scheduler.concurrent:
                    # Offline: written before the next transcript loads. Workers: the points
                    # whose calls are done are written (their traces sent to the store) while
                    # the workers prepare, not all at the end.
                    self.collect(wait=False)
            compacting.check()
            self._store_open(wait=True)
            log.info("loaded %d transcript(s)", len(self.stream.files))
            log.info("prepared %d probe(s) at %d point(s)", prepared[1], prepared[0])
            for scheduled in self.pending:
                if not scheduled.compaction_tried:
                    self._submit(scheduled, scheduler, progress)
            # Every call lands before the points' files are written: writing holds the
            # interpreter, which the LLM loop needs while calls are in flight.
            futures_wait([f for s in self.pending for f in (*s.futures, *s.controls)])
            self.collect(wait=True)
        log.info("evaluated %d probe(s)", sum(len(p.probes) for p in self.points))
        skipped = Counter(p.next_action_skipped for p in self.points if p.next_action_skipped)
        if skipped:
            reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.items()))
            log.info("next_action: %d point(s) without a probe (%s)", skipped.total(), reasons)

    def _prepared(
        self, workers: int, compacting: Compacting
    ) -> Iterator[tuple[list[ScheduledPoint], int]]:
        """Each transcript's prepared points (and its repeated probes dropped), in order:
        from ``workers`` processes, or prepared here (``workers`` 0)."""
        config, parts, stream = self.config, self.parts, self.stream
        assert stream is not None
        if not workers:
            for transcript in stream:
                points = compaction_points(transcript, config.compaction)
                compacting.note(transcript.id, transcript.total_tokens, bool(points))
                yield prepare_points(
                    config, transcript, points, parts.policy, parts.writer, self.render_ahead
                )
                del transcript  # the points hold what they need of it
            return
        self.pool = PreparePool(config, workers, self.render_ahead)
        log.info(
            "preparing points in %d worker process(es); calls start with the first point",
            workers,
        )
        for source in self.pool.prepared(stream):
            if source.transcript_id is not None:
                compacting.note(source.transcript_id, source.tokens, source.compacts)
            yield source.points, source.repeated
        self.pool.close()
        self.pool = None

    def collect(self, wait: bool) -> None:
        """Move the points whose probes are all in (``wait``: every point) from ``pending``
        through the sink into ``points``, in schedule order. A point stays pending until
        its result is in, so Ctrl-C while waiting for it leaves it to ``stop``."""
        while self.pending and (wait or _settled(self.pending[0])):
            point = self.pending[0].result(self.config)
            self.pending.pop(0)
            self.points.append(self.sink(point))

    def _submit(
        self, scheduled: ScheduledPoint, scheduler: ProbeScheduler, progress: JobProgress
    ) -> None:
        """A prepared point's probes (and their control arm) onto the LLM loop."""
        if self.before_calls is not None:  # once, before the first probe's calls
            ready, self.before_calls = self.before_calls, None
            if self.overlap and self.store_ready is not None:
                send_gate.hold()  # only requests to a server wait for the store
                self.held = ready
            else:
                ready()
        if scheduler.concurrent and not self.calls_started:
            self.calls_started = True
            log.info("calls start: %d point(s) prepared so far", len(self.pending))
        probes, uncompacted = scheduled.probes, scheduled.uncompacted
        if self.config.control and uncompacted is not None:
            scheduled.controls = [
                scheduler.submit(p, uncompacted, progress, arm="control") for p in probes
            ]
        if scheduled.compaction_error is not None:
            error = scheduled.compaction_error
            scheduled.futures = [failed_future(p, error, progress) for p in probes]
        else:
            own = None if self.config.control else uncompacted  # the control answer, in-probe
            scheduled.futures = [
                scheduler.submit(p, scheduled.context, progress, uncompacted=own) for p in probes
            ]
        scheduled.compaction_tried = True

    def _store_open(self, wait: bool) -> None:
        """Requests held for the store go once it is open (``wait``: wait for it); a store
        that cannot take the run fails them unsent, and the job stops with its error."""
        if self.held is None:
            return
        try:
            if wait:
                self.held()
            elif self.store_ready is None or not self.store_ready():
                return
        except Exception as exc:  # a signal leaves them held: stopping cancels them
            send_gate.release(error=str(exc) or type(exc).__name__)
            cancel_all()  # nothing of this job goes on once it has failed
            raise
        self.held = None
        send_gate.release()

    def stop_workers(self) -> None:
        """Worker processes still preparing points (an error, a signal) stop now."""
        if self.pool is not None:
            pool, self.pool = self.pool, None
            pool.close(stop=True)

    def stop(self) -> JobResult:
        """After Ctrl-C: cancel the calls in flight and keep the probes that finished.

        A probe counts as finished when its result (and its control arm's) was in
        before the cancel; the rest are ``unfinished_probes``. A point that was not
        compacted yet is left out (its probes are unfinished).
        """
        for s in self.pending:
            for future in (*s.futures, *s.controls):
                future.cancel()  # False once done: then its result stands
        cancel_all()
        points, unfinished = list(self.points), 0
        for s in self.pending:
            point, missing = s.partial(self.config)
            unfinished += missing
            if point is not None:
                points.append(self.sink(point))
        return self.result(points, interrupted=True, unfinished=unfinished)

    def result(
        self, points: list[PointResult], interrupted: bool = False, unfinished: int = 0
    ) -> JobResult:
        parts, stream = self.parts, self.stream
        return JobResult(
            policy=self.config.policy.name,
            transcripts=stream.ids if stream else [],
            inputs=warn_shared_tasks(stream.manifest, self.config.stats.cluster_by)
            if stream
            else None,
            cluster_by=self.config.stats.cluster_by,
            rubric=self.config.rubric,
            context_window=self.config.compaction.context_window,
            not_measured=self.unmeasured,
            points=points,
            repeated_probes=self.repeated,
            usage={
                **parts.ledger.metrics(),
                **({"probes/dropped": parts.writer.dropped} if parts.writer else {}),
            },
            judge_records=[r for p in points for r in judge_records(p)],
            calls=parts.ledger.calls(),
            interrupted=interrupted,
            unfinished_probes=unfinished,
        )


def warn_shared_tasks(manifest: TranscriptManifest, cluster_by: str) -> TranscriptManifest:
    """The manifest, with a warning (logged once) when transcripts share a task while
    clustered apart: their intervals are too narrow."""
    warning = shared_task_warning(manifest.tasks(), cluster_by)
    if warning is None or warning in manifest.warnings:
        return manifest
    log.warning(warning)
    return manifest.model_copy(update={"warnings": [*manifest.warnings, warning]})


def _settled(point: ScheduledPoint) -> bool:
    """Compacted (or failed to) with every probe's result in: collecting it cannot block."""
    futures = (*point.futures, *point.controls)
    return point.compaction_tried and all(f.done() for f in futures)


def judge_records(point: PointResult) -> list[dict[str, Any]]:
    """The LLM judge's input and raw output per judgment, in probe order, with probe ids."""
    return [record for r in point.probes for record in r.judge_records()]
