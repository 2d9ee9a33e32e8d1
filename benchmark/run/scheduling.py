"""Stage execution for the job loop: compaction at a point, and probes in flight.

``compact_point`` runs the policy (iterative replay included) and checks what it
returns; ``ProbeScheduler`` runs each probe's answer and judgment on the LLM loop,
bounded, or inline for offline stages; a ``ScheduledPoint`` holds one point's
futures until the loop collects them, or keeps the finished ones after Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from benchmark.answerer.base import Answer
from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.judge.base import Judgment
from benchmark.llm.loop import submit
from benchmark.llm.usage import CallPurpose
from benchmark.policy.base import Policy
from benchmark.probe.models import Probe
from benchmark.rubric import Rubric
from benchmark.run.compaction import CompactionPoint, Segments, segments, split_live
from benchmark.run.evaluation import aevaluate, evaluate, has_async
from benchmark.run.parts import Parts
from benchmark.run.progress import JobProgress
from benchmark.run.results import PointResult, ProbeResult
from benchmark.scoring.next_action_score import control_agreement
from benchmark.transcript.models import Message, Transcript

log = logging.getLogger(__name__)


def point_result(
    config: BenchmarkConfig,
    point: CompactionPoint,
    context: list[Message],
    probes: list[ProbeResult],
) -> PointResult:
    """A point's result; a context over ``compaction.context_window`` is a policy failure."""
    tokens_after = sum(m.tokens for m in context)
    return PointResult(
        point=point,
        tokens_after=tokens_after,
        context=context,
        probes=probes,
        over_window=tokens_after > config.compaction.context_window,
    )


def compact_point(
    config: BenchmarkConfig,
    transcript: Transcript,
    point: CompactionPoint,
    policy: Policy,
    previous: tuple[CompactionPoint, list[Message]] | None = None,
) -> list[Message]:
    """The compacted context at ``point``. With iterative replay and a ``previous``
    (point, context), the policy compacts that context plus the messages since,
    not the raw prefix."""
    if previous is not None and config.compaction.replay == "iterative":
        last, kept = previous
        live = [*kept, *transcript.messages[last.end : point.end]]
        context = compact(policy, split_live(live, config.compaction, point.head_end))
    else:
        context = compact(policy, segments(transcript, point))
    log.info(
        "%s point %d: %d -> %d tokens",
        transcript.id,
        point.ordinal,
        point.tokens_before,
        sum(m.tokens for m in context),
    )
    return context


def compact(policy: Policy, parts: Segments) -> list[Message]:
    kept = policy.compact(parts)
    if not isinstance(kept, list) or not all(isinstance(m, Message) for m in kept):
        raise UserError(
            f"policy {type(policy).__name__}.compact must return a list of Message, "
            f"got {type(kept).__name__}"
        )
    return kept


def stage_error(what: str, exc: BaseException) -> str:
    """One line saying which stage failed and why (the exception's first line)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{what}: {type(exc).__name__}" + (f": {first}" if first else "")


@dataclass
class ScheduledPoint:
    """One compaction point whose probes are in flight (and their control arm's)."""

    point: CompactionPoint
    context: list[Message]
    futures: list[Future[ProbeResult]]
    controls: list[Future[ProbeResult]]  # empty without control=true
    survival: list[float | None]
    compaction_error: str | None = None
    probe_writer_error: str | None = None
    next_action_skipped: str | None = None
    probes: list[Probe] = field(default_factory=list)
    compaction_tried: bool = False  # compacted (or failed to) and its probes scheduled
    uncompacted: list[Message] | None = None  # the control arm's context (control=true)
    rendered: Any = None  # the context rendered in a worker process, kept once received

    def result(self, config: BenchmarkConfig) -> PointResult:
        controls = [c.result() for c in self.controls] or [None] * len(self.futures)
        probes = [
            merged(f.result(), c, config.rubric.scale_max).model_copy(update={"survival": s})
            for f, s, c in zip(self.futures, self.survival, controls, strict=True)
        ]
        return point_result(config, self.point, self.context, probes).model_copy(
            update={
                "compaction_error": self.compaction_error,
                "probe_writer_error": self.probe_writer_error,
                "next_action_skipped": self.next_action_skipped,
            }
        )

    def partial(self, config: BenchmarkConfig) -> tuple[PointResult | None, int]:
        """After Ctrl-C (futures cancelled or done): the point with its finished probes,
        and how many were not finished. None for a point interrupted before it compacted
        (or failed to)."""
        expected = len(self.probes)
        if not self.compaction_tried:
            return None, expected
        controls: list[Future[ProbeResult] | None] = list(self.controls) or [None] * len(
            self.futures
        )
        kept = [
            (f, s, c)
            for f, s, c in zip(self.futures, self.survival, controls, strict=False)
            if finished(f) and (c is None or finished(c))
        ]
        done = replace(self, futures=[f for f, _, _ in kept], survival=[s for _, s, _ in kept])
        done.controls = [c for _, _, c in kept if c is not None]
        return done.result(config), expected - len(kept)


def merged(result: ProbeResult, control: ProbeResult | None, scale_max: int) -> ProbeResult:
    """``result`` with its control arm's; a next_action probe's control agreement is then
    scored against the control arm's answer (both answers given)."""
    if control is None:
        return result
    update: dict[str, object] = {"control": control}
    if result.probe.type == "next_action" and not (result.answer.failed or control.answer.failed):
        update["control_agreement"] = control_agreement(
            result.probe, result.answer.text, control.answer.text, scale_max
        )
    return result.model_copy(update=update)


def finished(future: Future[ProbeResult]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


class ProbeScheduler:
    """Runs probes on the LLM loop, at most ``limit`` at once (their prompts hold memory).

    Stages without async methods (the offline ones) run inline instead: there
    is nothing to overlap, and results stay exactly sequential.
    """

    def __init__(
        self,
        parts: Parts,
        rubric: Rubric,
        limit: int,
        rollup: Rubric | None = None,
        policy: str = "",
    ) -> None:
        self.parts = parts
        self.policy = policy  # named on each call's record, for its trace
        self.rubric = rubric
        self.rollup = rollup or rubric
        self.concurrent = has_async(parts.answerer, parts.judge)
        self.limit = limit
        self._slots: asyncio.Semaphore | None = None

    def submit(
        self,
        probe: Probe,
        context: list[Message],
        progress: JobProgress,
        arm: str = "compacted",
        uncompacted: list[Message] | None = None,
    ) -> Future[ProbeResult]:
        """The probe's result to come; ``arm``: "control" when ``context`` is uncompacted;
        ``uncompacted``: for a next_action probe with no control arm, its control answer's
        context (``benchmark.run.evaluation.aevaluate``)."""
        if not self.concurrent:
            parts = self.parts
            result = evaluate(
                probe, context, parts.answerer, parts.judge, self.rubric, self.rollup, uncompacted
            )
            progress.finished(result.failed)
            done: Future[ProbeResult] = Future()
            done.set_result(result)
            return done
        purpose = CallPurpose(
            probe.transcript_id, probe.point, self.policy, probe.id, probe.type, arm
        )
        return submit(self._run(probe, context, progress, purpose, uncompacted))

    async def _run(
        self,
        probe: Probe,
        context: list[Message],
        progress: JobProgress,
        purpose: CallPurpose,
        uncompacted: list[Message] | None,
    ) -> ProbeResult:
        if self._slots is None:  # created on the loop that uses it
            self._slots = asyncio.Semaphore(self.limit)
        async with self._slots:
            result = await aevaluate(
                probe,
                context,
                self.parts.answerer,
                self.parts.judge,
                self.rubric,
                rollup=self.rollup,
                purpose=purpose,
                uncompacted=uncompacted,
            )
        progress.finished(result.failed)
        return result


def failed_future(probe: Probe, error: str, progress: JobProgress) -> Future[ProbeResult]:
    """A probe that cannot be evaluated (its point failed to compact), as a done future:
    counted as failed with ``error``, never scored."""
    result = ProbeResult(
        probe=probe,
        answer=Answer(failed=True, error=error),
        judgment=Judgment(failed=True, error=error),
        score=None,
    )
    progress.finished(True)
    done: Future[ProbeResult] = Future()
    done.set_result(result)
    return done
