"""A question asked again at a later compaction point of the same session counts once.

With iterative compaction a fact stays in the region of every later point, so
the extractor asks about it again (on real trajectories 223 of 388 probes were
such repeats). Scoring every copy would weight the facts of a session's first
region by the number of points that follow it, and the copies of one question
are not independent evidence about the policy. A next-action probe is never a
repeat: its gold is the step after its own point, a different moment each time.
"""

from __future__ import annotations

from benchmark.probe.models import Fact, Probe, ProbeType

_Key = tuple[str, ProbeType, str, tuple[Fact, ...]]


class FirstAsked:
    """Keeps each (session, type, question, gold facts) the first time it is asked."""

    def __init__(self) -> None:
        self._seen: set[_Key] = set()
        self.repeated = 0

    def __call__(self, probes: list[Probe]) -> list[Probe]:
        fresh = []
        for probe in probes:
            if probe.type == "next_action":
                fresh.append(probe)
                continue
            key = (probe.transcript_id, probe.type, probe.question, tuple(probe.gold.facts))
            if key in self._seen:
                self.repeated += 1
                continue
            self._seen.add(key)
            fresh.append(probe)
        return fresh
