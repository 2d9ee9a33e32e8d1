"""Fact survival: how much of a probe's gold is still in the compacted context.

A score mixes what the context holds with how well the answerer finds it and
how the judge reads the reply. Survival needs neither: it is the share of a
probe's gold facts that the compacted context still states, matched the way
the reference judge matches an answer (exact identifiers as whole tokens,
phrases after normalisation; ``benchmark.judge.matching``). A policy that
keeps a fact the answerer then misses shows up as high survival and a low
score; one that drops it, as both low.

Only a fact the session stated before the point can survive. Gold of the region
is verbatim in it, so always; a ``next_action`` probe's gold is the step the log
takes after the point, whose target (a file about to be opened for the first
time) may be named nowhere before it. Given the uncompacted context, such a
probe counts only the facts it states (and has no survival when it states
none), so the uncompacted context itself scores 1.0 on every probe type.
"""

from __future__ import annotations

from functools import cached_property

from benchmark.judge.matching import Haystack, fact_matches
from benchmark.probe.models import Probe, ProbeType
from benchmark.transcript.models import Message

# Probe types whose gold lies past the point, so not necessarily in any context.
AFTER_THE_POINT: frozenset[ProbeType] = frozenset({"next_action"})


class ContextFacts:
    """One compacted context, prepared once for the survival of all probes asked of it.

    ``None`` from :meth:`survival` means "cannot be measured": a context holding a
    provider-encrypted item (the ``opaque`` policy) has text nobody here can read,
    and a probe about the step after the point may have no fact the session stated
    before it (``uncompacted``: the session up to the point).
    """

    def __init__(self, context: list[Message], uncompacted: list[Message] | None = None) -> None:
        self.readable = all(m.compaction is None for m in context)
        self._hay = Haystack("\n".join(m.render() for m in context))
        self._uncompacted = uncompacted

    @cached_property
    def _before(self) -> Haystack | None:
        if self._uncompacted is None:
            return None
        return Haystack("\n".join(m.render() for m in self._uncompacted))

    def survival(self, probe: Probe) -> float | None:
        if not self.readable:
            return None
        facts = probe.gold.facts
        if probe.type in AFTER_THE_POINT and self._before is not None:
            facts = [f for f in facts if fact_matches(f, self._before)]
        if not facts:
            return None
        return sum(fact_matches(f, self._hay) for f in facts) / len(facts)
