"""Answer variants whose content is known by construction, one set per probe.

* ``full``: every gold fact, written out from the facts themselves;
* ``partial``: a known half of them (no left-out fact touched by what is kept);
* ``none``: an on-topic reply that states none of them;
* ``wrong``: every fact with its exact values changed (another path, version,
  number, flag); a phrase with no such value is replaced by a plausible statement
  of the same kind that the gold does not hold;
* ``abstain``: "Not in context.";
* ``padded``: ``full`` plus irrelevant filler of a set length (the verbosity check).

A variant that cannot be built cleanly for a probe (a one-fact probe has no
half; a change that would collide with another gold fact) is left out and
counted, never built approximately.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from benchmark import tokens
from benchmark.audit.config import Variant
from benchmark.audit.text import EXACT_KINDS, has_value, mentions, mutate, touches_any
from benchmark.probe.models import Fact, FactKind, Probe, ProbeType

LABELS: dict[FactKind, str] = {
    "identifier": "exact value",
    "detail": "detail",
    "created": "created",
    "modified": "modified",
    "read": "read only",
    "pending": "still open",
    "choice": "chosen",
    "rationale": "why",
    "alternative": "rejected",
}

ABSTAIN = "Not in context."

# On-topic replies that name nothing; the first that touches no gold fact is used.
NONE_TEXTS: dict[ProbeType, tuple[str, ...]] = {
    "recall": (
        "Something failed in that part of the session and we looked into it, but I cannot "
        "give the exact details any more.",
        "There was a problem there that we investigated; I no longer have its specifics.",
    ),
    "artifact": (
        "We worked on several files in that part of the session, but I cannot say exactly "
        "which ones or how they changed.",
        "Some files were touched there; I no longer know which.",
    ),
    "continuation": (
        "Some work was still unfinished at that point, but I cannot list exactly what "
        "remained or what came next.",
        "A few things were left to do; I no longer know which.",
    ),
    "decision": (
        "We weighed a few options there and settled on one, but I cannot recall which one "
        "or the reasons.",
        "A choice was made after some discussion; I no longer know what it was.",
    ),
}

# Plausible statements of a phrase kind that no generated session holds.
DECOYS: dict[FactKind, tuple[str, ...]] = {
    "detail": (
        "the nightly export job timed out",
        "switch the logger to structured output",
        "Let me re-run the linter first.",
        "the cache warmup hung on start",
    ),
    "pending": (
        "update the onboarding guide for new contributors",
        "profile the slow dashboard query",
        "rotate the staging credentials",
        "clean up the stale feature branches",
    ),
    "choice": (
        "move the work into a background worker",
        "rewrite the module around a small state machine",
        "hide the feature behind a flag",
        "batch the writes in one transaction",
    ),
    "rationale": (
        "it was the quickest change to review",
        "the team wanted fewer moving parts in production",
        "it keeps memory use flat under load",
        "nobody else depends on that behaviour",
    ),
    "alternative": (
        "vendoring the dependency",
        "adding a feature flag",
        "a cron job that retries failed items",
        "forking the upstream library",
    ),
}

FILLER = (
    "As general background, careful notes make later work easier to pick up.",
    "Teams often find that small, steady steps beat large rewrites.",
    "Good naming and short functions help readers more than clever tricks do.",
    "Reviews go faster when each change has one clear purpose.",
    "Documentation ages quickly unless someone owns it.",
    "A calm pace usually produces fewer mistakes than a rushed one.",
)
_TRIES = 4  # alternative changes (or decoys) tried for a clean wrong answer
_SUBSETS = 30  # random halves tried for a clean partial answer


class Variants(BaseModel):
    """A probe's answers: variant -> (answer text, indices of the gold facts it states)."""

    model_config = ConfigDict(frozen=True)

    answers: dict[str, tuple[str, tuple[int, ...]]] = Field(default_factory=dict)
    skipped: dict[str, str] = Field(default_factory=dict, description="variant -> why")


def fact_lines(facts: Sequence[Fact]) -> str:
    return "\n".join(f"- {LABELS[f.kind]}: {f.text}" for f in facts)


def build_variants(
    probe: Probe, wanted: Sequence[Variant], seed: int = 0, padding_tokens: int = 300
) -> Variants:
    facts = probe.gold.facts
    every = tuple(range(len(facts)))
    answers: dict[str, tuple[str, tuple[int, ...]]] = {}
    skipped: dict[str, str] = {}
    rng = random.Random(f"{seed}:{probe.id}")
    for variant in wanted:
        if variant in ("full", "padded"):
            text = fact_lines(facts)
            if variant == "padded":
                text = f"{text}\n\n{filler(padding_tokens)}"
            answers[variant] = (text, every)
            continue
        built = _build(variant, probe, rng)
        if isinstance(built, str):
            skipped[variant] = built
        else:
            answers[variant] = built
    return Variants(answers=answers, skipped=skipped)


def _build(variant: Variant, probe: Probe, rng: random.Random) -> tuple[str, tuple[int, ...]] | str:
    """The variant's (text, stated indices), or why it cannot be built cleanly."""
    facts = probe.gold.facts
    if variant == "partial":
        return partial(facts, rng)
    if variant == "wrong":
        return wrong(facts)
    texts = NONE_TEXTS[probe.type] if variant == "none" else (ABSTAIN,)
    for text in texts:
        if not touches_any(facts, text):
            return text, ()
    return "every wording touches a gold fact"


def partial(facts: Sequence[Fact], rng: random.Random) -> tuple[str, tuple[int, ...]] | str:
    """Half the facts (rounded down), chosen so that no left-out fact is touched."""
    n = len(facts)
    if n < 2:
        return "one gold fact has no half"
    k = n // 2
    tries = [tuple(range(0, n, 2))[:k], tuple(range(1, n, 2))[:k]]
    tries += [tuple(sorted(rng.sample(range(n), k))) for _ in range(_SUBSETS)]
    for chosen in tries:
        text = fact_lines([facts[i] for i in chosen])
        left_out = [facts[i] for i in range(n) if i not in chosen]
        if not touches_any(left_out, text):
            return text, chosen
    return "no half leaves the other facts untouched"


def wrong(facts: Sequence[Fact]) -> tuple[str, tuple[int, ...]] | str:
    """Every fact changed; no exact fact survives, no replaced phrase is touched."""
    for attempt in range(_TRIES):
        lines: list[Fact] = []
        for n, fact in enumerate(facts):
            exact = fact.kind in EXACT_KINDS
            changed = mutate(fact.text, attempt, whole=exact)
            if changed is None:  # a phrase with no exact value: another statement of its kind
                pool = DECOYS[fact.kind]
                changed = pool[(attempt + n) % len(pool)]
            lines.append(Fact(kind=fact.kind, text=changed))
        text = fact_lines(lines)
        if all(_absent(f, text) for f in facts):
            return text, ()
    return "every change collides with a gold fact"


def _absent(fact: Fact, text: str) -> bool:
    """A fact a wrong answer must not state: an exact one not at all; a phrase whose values
    changed not verbatim (its words stay: that is the plausible part); a replaced one untouched."""
    if fact.kind in EXACT_KINDS or not has_value(fact.text):
        return not mentions(fact, text)
    return fact.text.lower() not in text.lower()


def filler(n_tokens: int) -> str:
    """Irrelevant sentences, cycled until the text has at least ``n_tokens`` tokens."""
    out: list[str] = []
    i = 0
    while tokens.count(" ".join(out)) < n_tokens:
        out.append(FILLER[i % len(FILLER)])
        i += 1
    return " ".join(out)
