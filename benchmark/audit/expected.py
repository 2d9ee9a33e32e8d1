"""The score each criterion should get for an answer whose content is known.

Written from the rubric's definitions (the criterion table in the README and in
``benchmark/judge/reference.py``'s docstring), not from any judge's code: what
enters is which gold facts the answer states (known by construction), the
identifiers it invents, and its length. Arithmetic is exact (fractions), with
halves rounded up.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from fractions import Fraction

from benchmark import identifiers
from benchmark.probe.models import Fact, FactKind
from benchmark.transcript.models import Message

FILES: tuple[FactKind, ...] = ("created", "modified", "read")
EXACT: tuple[FactKind, ...] = ("identifier", "created", "modified", "read")
REASONS: tuple[FactKind, ...] = ("choice", "rationale", "alternative")

# Criterion -> the fact kinds its fraction is taken over (empty: every fact).
KINDS: dict[str, tuple[FactKind, ...]] = {
    "accuracy_factual": (),
    "accuracy_technical": EXACT,
    "context_conversation_state": (),
    "context_artifact_state": FILES,
    "artifact_files_created": ("created",),
    "artifact_files_modified": ("modified",),
    "artifact_key_details": ("identifier", "detail"),
    "completeness_depth": (),
    "continuity_work_state": ("pending", "detail", "identifier"),
    "continuity_todo_state": ("pending",),
    "continuity_reasoning": REASONS,
    "recall_correctness": (),
}
CRITERIA: frozenset[str] = frozenset(
    {*KINDS, "completeness_coverage", "instruction_format", "instruction_constraints"}
)


def rounded(scale: int, x: Fraction) -> int:
    """``scale * x`` rounded half up."""
    value = scale * x + Fraction(1, 2)
    return value.numerator // value.denominator


def fraction(
    facts: Sequence[Fact], stated: Collection[int], kinds: tuple[FactKind, ...]
) -> Fraction:
    """Share of the facts of ``kinds`` that are stated; of all facts when the gold has none."""
    chosen = [i for i, f in enumerate(facts) if f.kind in kinds] if kinds else []
    if not chosen:
        chosen = list(range(len(facts)))
    return Fraction(sum(i in stated for i in chosen), len(chosen))


def fabricated(
    answer: str, question: str, context: Sequence[Message], facts: Sequence[Fact]
) -> list[str]:
    """Identifier tokens (paths, versions, pins, SHAs, ...) of the answer that occur in neither
    the context, the gold facts nor the question: the rubric's invented identifiers."""
    known = "\n".join([question, *(m.render() for m in context), *(f.text for f in facts)])
    return sorted(t for t in identifiers.tokens(answer) if t not in known)


def expected_scores(
    criteria: Sequence[str],
    facts: Sequence[Fact],
    stated: Collection[int],
    *,
    invented: int,
    answer_tokens: int,
    token_limit: int,
    scale: int,
) -> dict[str, int]:
    """criterion -> the score the rubric's definitions give this answer."""
    return {
        c: _score(c, facts, set(stated), invented, answer_tokens, token_limit, scale)
        for c in criteria
    }


def _score(
    criterion: str,
    facts: Sequence[Fact],
    stated: set[int],
    invented: int,
    length: int,
    limit: int,
    s: int,
) -> int:
    if criterion not in CRITERIA:
        raise KeyError(criterion)
    if length == 0:
        return 0  # an empty answer scores nothing anywhere
    if criterion == "instruction_format":
        return s if length <= limit else rounded(s, Fraction(limit, length))
    if criterion == "instruction_constraints":
        return max(0, s - invented)
    if criterion == "completeness_coverage":
        kinds = list(dict.fromkeys(f.kind for f in facts))
        covered = {facts[i].kind for i in stated}
        return rounded(s, Fraction(len(covered), len(kinds)))
    share = fraction(facts, stated, KINDS[criterion])
    if criterion == "accuracy_factual":
        return max(0, rounded(s, share) - invented)
    if criterion == "recall_correctness" and 0 < share < 1 and s >= 2:
        return min(max(rounded(s, share), 1), s - 1)
    return rounded(s, share)
