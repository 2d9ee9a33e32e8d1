"""Answer variants whose content is known by construction, one set per probe.

* ``full``: every gold fact, written out from the facts themselves;
* ``partial``: a known half of them (no left-out fact touched by what is kept);
* ``none``: an on-topic reply that states none of them;
* ``wrong``: every fact with its exact values changed (another path, version,
  number, flag); a phrase with no such value is replaced by a plausible statement
  of the same kind that the gold does not hold;
* ``abstain``: "Not in context.";
* ``padded``: ``full`` plus irrelevant filler of a set length (the verbosity check);
* ``paraphrase``: every fact restated in other words, exact values verbatim
  (:mod:`benchmark.audit.paraphrase`);
* ``extra_wrong``: ``full`` plus one false fact of the same kind as a gold one (its
  exact value changed, e.g. another path or version, absent from the session);
* ``near_miss``: ``full`` with one exact value one character off (``src/utils.py``
  -> ``src/util.py``, ``3.21.4`` -> ``3.21.5``), absent from the session;
* ``confident_wrong``: ``full``'s form and number of lines with every fact wrong:
  exact values changed, every phrase replaced by another statement of its kind
  (no gold wording kept, unlike ``wrong``).

A variant that cannot be built cleanly for a probe (a one-fact probe has no
half; a change that would collide with another gold fact or with the session), or
that comes out as the same text as an earlier variant (a one-value probe's near
miss is its ``wrong`` answer), is left out and counted, never built approximately.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from benchmark.audit.answer_text import (
    EXACT_KINDS,
    has_value,
    mentions,
    mutate,
    near_miss,
    occurs,
    touches_any,
)
from benchmark.audit.config import Variant
from benchmark.audit.paraphrase import paraphrase
from benchmark.probe.models import Fact, FactKind, Probe, ProbeType
from benchmark.text import tokens

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
        "OSError: no space left on device while writing the report",
        "migrate the cron schedule to the new scheduler",
        "the webhook retries were doubled",
        "I'll bump the worker pool to eight threads.",
        "translate the error pages into German",
        "the login form lost its focus styles",
        "drop the legacy XML exporter",
        "TimeoutError: the health probe took longer than five seconds",
    ),
    "pending": (
        "update the onboarding guide for new contributors",
        "profile the slow dashboard query",
        "rotate the staging credentials",
        "clean up the stale feature branches",
        "archive the old billing tables",
        "split the settings page into tabs",
        "benchmark the image resizer on large uploads",
        "write the incident summary for the outage",
    ),
    "choice": (
        "move the work into a background worker",
        "rewrite the module around a small state machine",
        "hide the feature behind a flag",
        "batch the writes in one transaction",
        "cache the lookups in a module-level dictionary",
        "replace the polling with a message queue",
    ),
    "rationale": (
        "it was the quickest change to review",
        "the team wanted fewer moving parts in production",
        "it keeps memory use flat under load",
        "nobody else depends on that behaviour",
        "the vendor recommended it in their upgrade notes",
        "it lets the tests run without a network",
    ),
    "alternative": (
        "vendoring the dependency",
        "adding a feature flag",
        "a cron job that retries failed items",
        "forking the upstream library",
        "rewriting the service in Go",
        "moving the data to a spreadsheet",
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
    probe: Probe,
    wanted: Sequence[Variant],
    seed: int = 0,
    padding_tokens: int = 300,
    session: str = "",
) -> Variants:
    """The probe's answers. ``session`` (the judge's context as text): a value invented for
    ``extra_wrong`` or ``near_miss`` must not occur in it, so the statement is surely false."""
    facts = probe.gold.facts
    every = tuple(range(len(facts)))
    answers: dict[str, tuple[str, tuple[int, ...]]] = {}
    skipped: dict[str, str] = {}
    rng = random.Random(f"{seed}:{probe.id}")
    for variant in wanted:
        if variant == "paraphrase":
            answers[variant] = (paraphrase(facts), every)
            continue
        if variant in ("full", "padded"):
            text = fact_lines(facts)
            if variant == "padded":
                text = f"{text}\n\n{filler(padding_tokens)}"
            answers[variant] = (text, every)
            continue
        built = _build(variant, probe, rng, session)
        same = [
            v for v, (text, _) in answers.items() if not isinstance(built, str) and text == built[0]
        ]
        if isinstance(built, str) or same:
            skipped[variant] = built if isinstance(built, str) else f"the same answer as {same[0]}"
        else:
            answers[variant] = built
    return Variants(answers=answers, skipped=skipped)


def _build(
    variant: Variant, probe: Probe, rng: random.Random, session: str
) -> tuple[str, tuple[int, ...]] | str:
    """The variant's (text, stated indices), or why it cannot be built cleanly."""
    facts = probe.gold.facts
    if variant == "partial":
        return partial(facts, rng)
    if variant == "wrong":
        return wrong(facts)
    if variant == "confident_wrong":
        return confident_wrong(facts)
    if variant == "extra_wrong":
        return extra_wrong(facts, rng, session)
    if variant == "near_miss":
        return one_off(facts, rng, session)
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


def confident_wrong(facts: Sequence[Fact]) -> tuple[str, tuple[int, ...]] | str:
    """One line per fact, each wrong: exact values changed, every phrase (with or without
    values) replaced by a distinct statement of its kind; no gold fact is touched. Its values
    are changed otherwise than ``wrong``'s, so the two differ on a probe of exact facts."""
    for attempt in range(1, _TRIES + 1):
        lines: list[Fact] = []
        used: dict[FactKind, int] = {}
        for fact in facts:
            if fact.kind in EXACT_KINDS:
                changed = mutate(fact.text, attempt, whole=True) or fact.text
            else:
                pool = DECOYS[fact.kind]
                n = used[fact.kind] = used.get(fact.kind, -1) + 1
                changed = pool[(attempt + n) % len(pool)]
            lines.append(Fact(kind=fact.kind, text=changed))
        text = fact_lines(lines)
        if not touches_any(list(facts), text):
            return text, ()
    return "every replacement collides with a gold fact"


def extra_wrong(
    facts: Sequence[Fact], rng: random.Random, session: str
) -> tuple[str, tuple[int, ...]] | str:
    """``full`` plus one false fact next to the gold fact it was made from: an exact value
    changed when the gold has one (absent from the session and the gold), else a decoy."""
    for i in _candidates(facts, rng) + _phrases(facts, rng):
        fact = facts[i]
        for attempt in range(_TRIES):
            if fact.kind in EXACT_KINDS or has_value(fact.text):
                changed = mutate(fact.text, attempt, whole=fact.kind in EXACT_KINDS)
                ok = changed is not None and _novel(fact.text, changed, facts, session)
            else:
                pool = DECOYS[fact.kind]
                changed = pool[(attempt + i) % len(pool)]
                ok = not touches_any(list(facts), changed)
                ok = ok and changed.lower() not in session.lower()
            if ok and changed is not None:
                extra = Fact(kind=fact.kind, text=changed)
                lines = [*facts[: i + 1], extra, *facts[i + 1 :]]
                return fact_lines(lines), tuple(range(len(facts)))
    return "every false extra collides with the gold or the session"


def one_off(
    facts: Sequence[Fact], rng: random.Random, session: str
) -> tuple[str, tuple[int, ...]] | str:
    """``full`` with one exact value one character off; that fact is not stated."""
    for i in _candidates(facts, rng):
        fact = facts[i]
        changed = near_miss(fact.text, whole=fact.kind in EXACT_KINDS)
        if changed is None or not _novel(fact.text, changed, facts, session):
            continue
        lines = [Fact(kind=f.kind, text=changed) if n == i else f for n, f in enumerate(facts)]
        text = fact_lines(lines)
        if _absent(fact, text):
            return text, tuple(n for n in range(len(facts)) if n != i)
    return "no exact value can be missed by one character cleanly"


def _candidates(facts: Sequence[Fact], rng: random.Random) -> list[int]:
    """Facts holding an exact value: exact kinds first, then phrases with a value; shuffled."""
    exact = [i for i, f in enumerate(facts) if f.kind in EXACT_KINDS]
    valued = [i for i, f in enumerate(facts) if f.kind not in EXACT_KINDS and has_value(f.text)]
    rng.shuffle(exact)
    rng.shuffle(valued)
    return exact + valued


def _phrases(facts: Sequence[Fact], rng: random.Random) -> list[int]:
    plain = [i for i, f in enumerate(facts) if f.kind not in EXACT_KINDS and not has_value(f.text)]
    rng.shuffle(plain)
    return plain


def _novel(old: str, new: str, facts: Sequence[Fact], session: str) -> bool:
    """Whether every token ``new`` adds to ``old`` is absent from the session and the gold."""
    added = {t.strip(".,;:!?()`'\"") for t in set(new.split()) - set(old.split())} - {""}
    gold = "\n".join(f.text for f in facts)
    return bool(added) and not any(occurs(t, where) for t in added for where in (session, gold))


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
