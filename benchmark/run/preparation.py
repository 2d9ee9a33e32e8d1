"""A transcript's points made ready for their calls: probes, compacted context, survival.

Everything here is CPU work over one transcript and the parts that need no model
(an offline probe writer and policy), so it runs the same in the job's process or in
a worker process (``benchmark.run.prepare_workers``); a job overlaps it with the calls
of points prepared earlier only in workers, where it cannot starve the LLM loop.
"""

from __future__ import annotations

import logging

from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.llm.prompting import prepared_context
from benchmark.policy.base import Policy
from benchmark.probe.extract import why_no_probes
from benchmark.probe.models import Probe
from benchmark.probe.next_action import skip_reason
from benchmark.probe.repeats import FirstAsked
from benchmark.probe.set_cache import load_or_generate
from benchmark.probe.writer import LLMProbeWriter
from benchmark.run.compaction import CompactionConfig, CompactionPoint, find_points, head_warning
from benchmark.run.scheduling import ScheduledPoint, compact_point, stage_error
from benchmark.scoring.survival import ContextFacts
from benchmark.transcript.models import Message, Transcript

log = logging.getLogger(__name__)


def prepare_points(
    config: BenchmarkConfig,
    transcript: Transcript,
    points: list[CompactionPoint],
    policy: Policy,
    writer: LLMProbeWriter | None,
    render: bool,
) -> tuple[list[ScheduledPoint], int]:
    """One transcript's points, in order: probes (a question asked at an earlier point of
    the session counts once), compacted context, facts' survival; with ``render``, the
    context rendered for the calls. Also how many repeated probes were dropped."""
    first_asked = FirstAsked()
    scheduled_points: list[ScheduledPoint] = []
    previous: tuple[CompactionPoint, list[Message]] | None = None
    made = 0  # probes from this transcript, plus points skipped with a warning
    for point in points:
        probes, writer_error = _probes(config, transcript, point, writer)
        probes = first_asked(probes)
        made += len(probes) + (writer_error is not None)
        scheduled = ScheduledPoint(
            point,
            [],
            [],
            [],
            [],
            probe_writer_error=writer_error,
            next_action_skipped=_next_action_skipped(config, transcript, point),
            probes=probes,
        )
        # The control arm (control=true) asks the same probes of the uncompacted session;
        # without it, a next_action probe is answered from it inside its evaluation.
        scheduled.uncompacted = transcript.messages[: point.end]
        scheduled_points.append(scheduled)
        try:
            context = compact_point(config, transcript, point, policy, previous)
        except UserError:
            raise
        except Exception as exc:  # recorded per probe, never scored
            error = stage_error("compaction failed", exc)
            log.warning(
                "%s point %d: %s; its %d probe(s) are counted as failed",
                transcript.id,
                point.ordinal,
                error,
                len(probes),
            )
            scheduled.compaction_error = error
            scheduled.survival = [None] * len(probes)
            previous = None  # the next point compacts from the raw session
            continue
        facts = ContextFacts(context, scheduled.uncompacted)
        if render:
            scheduled.rendered = prepared_context(context)
        scheduled.context = context
        scheduled.survival = [facts.survival(p) for p in probes]
        previous = (point, context)
    if points and not made:
        log.warning(
            "%s: %s", source_name(transcript), why_no_probes(transcript, points, config.probe)
        )
    return scheduled_points, first_asked.repeated


def _probes(
    config: BenchmarkConfig,
    transcript: Transcript,
    point: CompactionPoint,
    writer: LLMProbeWriter | None,
) -> tuple[list[Probe], str | None]:
    """The point's probes, and why there are none when the probe writer failed.

    A writer that fails (endpoint down, replies it cannot use) skips its point,
    with the reason logged and counted; the extractor failing is a bug and raises.
    """
    try:
        probes = load_or_generate(transcript, point, config.probe, config.cache_path, writer=writer)
    except UserError:
        raise
    except Exception as exc:
        if writer is None:
            raise
        error = stage_error("probe writer failed", exc)
        log.warning(
            "%s point %d: %s; no probes from this point", transcript.id, point.ordinal, error
        )
        return [], error
    return probes, None


def _next_action_skipped(
    config: BenchmarkConfig, transcript: Transcript, point: CompactionPoint
) -> str | None:
    """Why the point has no next-action probe when ``probe.types`` asks for one."""
    if "next_action" not in config.probe.types:
        return None
    return skip_reason(transcript, point)


def compaction_points(transcript: Transcript, config: CompactionConfig) -> list[CompactionPoint]:
    """The transcript's compaction points; a warning for a protected head too long, and
    for a session too short to compact (it gives no probes)."""
    found = find_points(transcript, config)
    warning = head_warning(transcript, config)
    if warning is not None:
        log.warning("%s: %s", source_name(transcript), warning)
    if not found:
        log.warning(
            "transcript %r: %d tokens never pass the compaction trigger (%d tokens = "
            "compaction.context_window x compaction.trigger_ratio): no probes from it",
            transcript.id,
            transcript.total_tokens,
            trigger(config),
        )
    return found


def trigger(config: CompactionConfig) -> int:
    return int(config.context_window * config.trigger_ratio)


class Compacting:
    """Which transcripts compact, as they come: no session compacting at all is an error
    (``check``, once all are in), naming the longest."""

    def __init__(self, config: CompactionConfig) -> None:
        self.config = config
        self.compacting = 0
        self.longest: tuple[int, str] | None = None  # (tokens, id) of the longest session

    def note(self, transcript_id: str, tokens: int, compacts: bool) -> None:
        if self.longest is None or tokens > self.longest[0]:
            self.longest = (tokens, transcript_id)
        self.compacting += compacts

    def check(self) -> None:
        if not self.compacting and self.longest is not None:
            tokens, longest = self.longest
            raise UserError(
                f"no transcript reaches the compaction trigger ({trigger(self.config)} tokens "
                "= compaction.context_window x compaction.trigger_ratio; the longest, "
                f"{longest!r}, has {tokens}): lower compaction.context_window"
            )


def source_name(transcript: Transcript) -> str:
    """What a warning names: the transcript's file, or its id for a generated session."""
    source = transcript.source
    return source if source and not source.startswith("synthetic:") else transcript.id
