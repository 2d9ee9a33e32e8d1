"""What a correct judge must give each answer variant: a band per criterion class.

Derived from how each variant is built (:mod:`benchmark.audit.answers`) and from
what each criterion asks (the rubric's questions, ``benchmark/judge/prompts.py``),
never from any judge's scoring table. A band is a range of the scale, not one
value: the audit checks what the construction settles (a full answer deserves
the top, an answer that states nothing deserves next to nothing, a half answer
lies strictly between) and leaves open what it does not (``any``: not counted).

Criterion classes, from what the criterion asks:

* ``accuracy``: are the facts it states right (accuracy_factual, accuracy_technical);
* ``coverage``: how much of the gold state it carries (context, artifact,
  completeness and continuity criteria); some ask about one kind of fact only
  (``benchmark.rubric.criteria.SCOPES``: "which files were created" is about
  created files);
* ``verdict``: correct / partly right / wrong against the gold (recall_correctness);
* ``form``: the form the question asks for (instruction_format);
* ``constraints``: within the question's constraints (instruction_constraints).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from benchmark.probe.models import Fact, FactKind
from benchmark.rubric.criteria import SCOPES

Class = Literal["accuracy", "coverage", "verdict", "form", "constraints"]
CLASSES: dict[str, Class] = {
    "accuracy_factual": "accuracy",
    "accuracy_technical": "accuracy",
    "context_conversation_state": "coverage",
    "context_artifact_state": "coverage",
    "artifact_files_created": "coverage",
    "artifact_files_modified": "coverage",
    "artifact_key_details": "coverage",
    "completeness_coverage": "coverage",
    "completeness_depth": "coverage",
    "continuity_work_state": "coverage",
    "continuity_todo_state": "coverage",
    "continuity_reasoning": "coverage",
    "recall_correctness": "verdict",
    "instruction_format": "form",
    "instruction_constraints": "constraints",
}
CRITERIA: frozenset[str] = frozenset(CLASSES)


@dataclass(frozen=True)
class Band:
    """Scores ``lo..hi`` as shares of the scale (open ends excluded); ``any`` checks nothing."""

    name: str
    lo: float = 0.0
    hi: float = 1.0
    lo_open: bool = False
    hi_open: bool = False

    def holds(self, score: float, scale: int) -> bool:
        x, eps = score / scale, 1e-9
        above = x > self.lo + eps if self.lo_open else x >= self.lo - eps
        below = x < self.hi - eps if self.hi_open else x <= self.hi + eps
        return above and below


BANDS: dict[str, Band] = {
    b.name: b
    for b in (
        Band("top", lo=1.0),  # the scale's maximum
        Band("high", lo=0.8),  # at least 4 of 5 (the top of a 2/1/0 scale)
        Band("mid", lo_open=True, hi_open=True),  # strictly between 0 and the top
        Band("credit", lo=0.2, lo_open=True),  # more than 1 of 5
        Band("below_top", hi_open=True),  # anything but the top
        Band("low", hi=0.2),  # at most 1 of 5 (0 on a 2/1/0 scale)
        Band("zero", hi=0.0),
        Band("any"),
    )
}
# "share": from the share of the criterion's facts the answer states: all -> top,
# none -> low, some -> mid; any when the gold has no fact the criterion asks about.
SHARE = "share"
# "scoped": "share" for a criterion about one kind of fact (SCOPES), "any" for one about the
# whole answer (whether one value one character off costs "every part answered" is open).
SCOPED = "scoped"

# variant -> class -> band. Why each row is what it is: README "Auditing the judge".
EXPECT: dict[str, dict[Class, str]] = {
    "full": {
        "accuracy": "top",
        "coverage": "top",
        "verdict": "top",
        "form": "high",
        "constraints": "high",
    },
    "padded": {
        "accuracy": "top",
        "coverage": "top",
        "verdict": "top",
        "form": "any",
        "constraints": "any",
    },
    "paraphrase": {
        "accuracy": "high",
        "coverage": "high",
        "verdict": "high",
        "form": "high",
        "constraints": "high",
    },
    "partial": {
        "accuracy": "credit",
        "coverage": SHARE,
        "verdict": "mid",
        "form": "high",
        "constraints": "high",
    },
    "near_miss": {
        "accuracy": "below_top",
        "coverage": SCOPED,
        "verdict": SHARE,
        "form": "high",
        "constraints": "any",
    },
    "extra_wrong": {
        "accuracy": "below_top",
        "coverage": "credit",
        "verdict": "below_top",
        "form": "high",
        "constraints": "any",
    },
    "none": {
        "accuracy": "low",
        "coverage": "low",
        "verdict": "low",
        "form": "any",
        "constraints": "any",
    },
    "wrong": {
        "accuracy": "low",
        "coverage": "low",
        "verdict": "low",
        "form": "high",
        "constraints": "any",
    },
    "confident_wrong": {
        "accuracy": "low",
        "coverage": "low",
        "verdict": "low",
        "form": "high",
        "constraints": "any",
    },
    "abstain": {c: "zero" for c in ("accuracy", "coverage", "verdict", "form", "constraints")},
}


def share_band(facts: Sequence[Fact], stated: Collection[int], kinds: tuple[FactKind, ...]) -> str:
    """``top``/``mid``/``low`` by the share of the facts of ``kinds`` (all when empty) stated;
    ``any`` when the gold has no fact of those kinds."""
    chosen = [i for i, f in enumerate(facts) if not kinds or f.kind in kinds]
    if not chosen:
        return "any"
    hits = sum(i in stated for i in chosen)
    return "top" if hits == len(chosen) else "low" if hits == 0 else "mid"


def expected_bands(
    criteria: Sequence[str], variant: str, facts: Sequence[Fact], stated: Collection[int]
) -> dict[str, str]:
    """criterion -> the name of the band a correct judge's score lies in."""
    row = EXPECT[variant]
    out = {}
    for criterion in criteria:
        if criterion not in CRITERIA:
            raise KeyError(criterion)
        band = row[CLASSES[criterion]]
        if band == SCOPED:
            band = SHARE if criterion in SCOPES else "any"
        if band == SHARE:
            band = share_band(facts, stated, SCOPES.get(criterion, ()))
        out[criterion] = band
    return out
