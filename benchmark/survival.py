"""Fact survival: how much of a probe's gold is still in the compacted context.

A score mixes what the context holds with how well the answerer finds it and
how the judge reads the reply. Survival needs neither: it is the share of a
probe's gold facts that the compacted context still states, matched the way
the reference judge matches an answer (exact identifiers as whole tokens,
phrases after normalisation; ``benchmark.judge.matching``). A policy that
keeps a fact the answerer then misses shows up as high survival and a low
score; one that drops it, as both low.
"""

from __future__ import annotations

from benchmark.judge.matching import Haystack, fact_matches
from benchmark.probe.models import Probe
from benchmark.transcript.models import Message


class ContextFacts:
    """One compacted context, prepared once for the survival of all probes asked of it.

    ``None`` from :meth:`survival` means "cannot be measured": a context holding a
    provider-encrypted item (the ``opaque`` policy) has text nobody here can read.
    """

    def __init__(self, context: list[Message]) -> None:
        self.readable = all(m.compaction is None for m in context)
        self._hay = Haystack("\n".join(m.render() for m in context))

    def survival(self, probe: Probe) -> float | None:
        if not self.readable:
            return None
        facts = probe.gold.facts
        return sum(fact_matches(f, self._hay) for f in facts) / len(facts)
