"""The offline reference judge: rubric scores computed from typed gold facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchmark.judge.base import CriterionResult, JudgeRequest, Judgment
from benchmark.judge.matching import EXACT_KINDS, Haystack, fabricated, fact_matches
from benchmark.probe.models import Fact, FactKind
from benchmark.rubric.criteria import SCOPES
from benchmark.scoring.abstention import is_abstention
from benchmark.text import tokens


def scaled(scale_max: int, num: int, den: int) -> int:
    """``round_half_up(scale_max * num / den)`` in exact integer arithmetic.

    ``round`` would send 2.5 to 2, and float products such as ``5 * 0.7``
    can land just below the half.
    """
    return (2 * scale_max * num + den) // (2 * den)


@dataclass(frozen=True)
class _Facts:
    """The gold facts of one judgment, each with whether the answer matched it."""

    pairs: tuple[tuple[Fact, bool], ...]

    def select(self, kinds: Iterable[FactKind]) -> _Facts:
        """Facts of ``kinds``; all facts when ``kinds`` is empty or the gold has none of them."""
        wanted = set(kinds)
        chosen = tuple(p for p in self.pairs if p[0].kind in wanted)
        return _Facts(chosen) if chosen else self

    @property
    def hits(self) -> int:
        return sum(h for _, h in self.pairs)

    def kinds(self) -> tuple[list[FactKind], list[FactKind]]:
        """Kinds present in the gold (first-seen order) and those with a matched fact."""
        present = list(dict.fromkeys(f.kind for f, _ in self.pairs))
        covered = [k for k in present if any(h for f, h in self.pairs if f.kind == k)]
        return present, covered

    def describe(self) -> str:
        found = [_show(f) for f, h in self.pairs if h]
        missed = [_show(f) for f, h in self.pairs if not h]
        parts = [f"{len(found)}/{len(self.pairs)} facts matched"]
        if found:
            parts.append("matched: " + "; ".join(found))
        if missed:
            parts.append("missed: " + "; ".join(missed))
        return ". ".join(parts)


def _show(fact: Fact, limit: int = 60) -> str:
    text = fact.text if len(fact.text) <= limit else fact.text[: limit - 3] + "..."
    return f"{fact.kind} {text!r}"


class ReferenceJudge:
    """Scores each criterion from which gold facts the answer states.

    Fact matching (``benchmark.judge.matching``):

    * exact kinds (``identifier``, ``created``, ``modified``, ``read``): the fact
      text occurs verbatim, case-sensitive, as a whole token of the answer; a
      path prefix is tolerated (``src/a/db.py`` matches ``/repo/src/a/db.py``),
      a longer name is not (``src/a/db_utils.py``, ``db.py.bak``, ``0.27.21``).
    * phrase kinds (``detail``, ``pending``, ``choice``, ``rationale``,
      ``alternative``): the normalized fact (lowercase, quotes and backticks
      removed, whitespace collapsed) is a substring of the normalized answer,
      or at least ``term_ratio`` (0.8) of its stemmed content terms occur in it.

    Fabricated identifiers: identifier tokens of the answer
    (``benchmark.text.identifiers.tokens``) that occur neither in the compacted
    context's text, nor in a gold fact, nor in the question. Each costs one
    point (penalty ``p``) where noted below, with a floor of 0.

    With ``s = scale_max``, ``f(K)`` = fraction of gold facts of kinds ``K``
    that the answer matches ("all if none": the whole gold when it has no fact
    of kinds ``K``), and ``r(x) = round_half_up(s * x)`` (exact):

    ============================  ===============================================
    accuracy_factual              ``max(0, r(f(all)) - p)``
    accuracy_technical            ``r(f(identifier, created, modified, read))``, all if none
    context_conversation_state    ``r(f(all))``
    context_artifact_state        ``r(f(created, modified, read))``, all if none
    artifact_files_created        ``r(f(created))``, all if none
    artifact_files_modified       ``r(f(modified))``, all if none
    artifact_key_details          ``r(f(identifier, detail))``, all if none
    completeness_coverage         ``r(kinds with >= 1 matched fact / kinds in gold)``
    completeness_depth            ``r(f(all))``
    continuity_work_state         ``r(f(pending, detail, identifier))``, all if none
    continuity_todo_state         ``r(f(pending))``, all if none
    continuity_reasoning          ``r(f(choice, rationale, alternative))``, all if none
    instruction_format            ``s`` for an answer of at most
                                  ``max_answer_tokens`` tokens, else
                                  ``r(max_answer_tokens / answer tokens)``
    instruction_constraints       ``max(0, s - p)``
    recall_correctness            ``s`` if f(all) == 1, 0 if f(all) == 0, else
                                  ``r(f(all))`` clamped to ``[1, s - 1]`` (the 2/1/0 scale)
    ============================  ===============================================

    An abstention (``benchmark.scoring.abstention``: an empty answer, or one that only
    declines, such as "Not in context.") scores 0 on every criterion.

    ``unmeasured_criteria(answerer)`` names the criteria this judge cannot tell
    answers apart on for an answerer that declares ``verbatim = True`` (every
    value of its answers is context text) and a ``max_answer_tokens`` within
    this judge's limit: ``instruction_format`` and ``instruction_constraints``
    are then the full score for every answer it gives (``benchmark.judge.measured``).
    The judge sees only its request: it never learns which policy produced the
    context, and the same request always yields the same judgment.
    """

    CRITERIA: frozenset[str] = frozenset(
        {
            "accuracy_factual",
            "accuracy_technical",
            "context_conversation_state",
            "context_artifact_state",
            "artifact_files_created",
            "artifact_files_modified",
            "artifact_key_details",
            "completeness_coverage",
            "completeness_depth",
            "continuity_work_state",
            "continuity_todo_state",
            "continuity_reasoning",
            "instruction_format",
            "instruction_constraints",
            "recall_correctness",
        }
    )

    def __init__(self, max_answer_tokens: int = 1000, term_ratio: float = 0.8) -> None:
        if isinstance(max_answer_tokens, bool) or not isinstance(max_answer_tokens, int):
            raise ValueError(f"max_answer_tokens must be an integer, got {max_answer_tokens!r}")
        if max_answer_tokens <= 0:
            raise ValueError(f"max_answer_tokens must be > 0, got {max_answer_tokens}")
        if not 0 < term_ratio <= 1:
            raise ValueError(f"term_ratio must be in (0, 1], got {term_ratio}")
        self.max_answer_tokens = max_answer_tokens
        self.term_ratio = float(term_ratio)

    def unmeasured_criteria(self, answerer: object) -> frozenset[str]:
        """Criteria every answer of ``answerer`` gets full marks on, abstentions aside."""
        limit = getattr(answerer, "max_answer_tokens", None)
        verbatim = getattr(answerer, "verbatim", False) is True
        if verbatim and isinstance(limit, int) and limit <= self.max_answer_tokens:
            return frozenset({"instruction_format", "instruction_constraints"})
        return frozenset()

    def judge(self, request: JudgeRequest) -> Judgment:
        unknown = [c for c in request.rubric_criteria if c not in self.CRITERIA]
        if unknown:
            raise ValueError(
                f"ReferenceJudge: unknown criterion {unknown[0]!r} "
                f"(supported: {', '.join(sorted(self.CRITERIA))})"
            )
        if request.scale_max <= 0:
            raise ValueError(f"scale_max must be > 0, got {request.scale_max}")
        answer = request.model_response
        gold = request.ground_truth.facts
        empty = is_abstention(answer)
        hay = Haystack(answer)  # prepared once for all the gold facts
        facts = _Facts(
            tuple((f, not empty and fact_matches(f, hay, self.term_ratio)) for f in gold)
        )
        context = request.compacted_context
        invented = [] if empty else fabricated(answer, request.probe_question, context, gold)
        results = [
            self._score(name, facts, request.scale_max, answer, empty, invented)
            for name in request.rubric_criteria
        ]
        return Judgment(results=results)

    def _score(
        self,
        name: str,
        facts: _Facts,
        s: int,
        answer: str,
        empty: bool,
        fabricated: Sequence[str],
    ) -> CriterionResult:
        fab_note = (
            f"fabricated identifiers (-{len(fabricated)}): {', '.join(fabricated[:5])}"
            if fabricated
            else "no fabricated identifiers"
        )
        if name == "instruction_format":
            score, why = self._format(answer, s, empty)
            return CriterionResult(criterion=name, score=score, reasoning=why)
        if name == "instruction_constraints":
            if empty:
                return CriterionResult(criterion=name, score=0, reasoning="abstention")
            return CriterionResult(
                criterion=name, score=max(0, s - len(fabricated)), reasoning=fab_note
            )
        if name == "completeness_coverage":
            kinds, covered = facts.kinds()
            why = f"{len(covered)}/{len(kinds)} fact kinds covered: {', '.join(covered) or '-'}"
            return CriterionResult(
                criterion=name, score=scaled(s, len(covered), len(kinds)), reasoning=why
            )
        subset = facts.select(_SUBSETS.get(name, ()))
        hits, total = subset.hits, len(subset.pairs)
        base = scaled(s, hits, total)
        if name == "accuracy_factual":
            return CriterionResult(
                criterion=name,
                score=max(0, base - len(fabricated)),
                reasoning=f"{subset.describe()}. {fab_note}",
            )
        if name == "recall_correctness":
            if hits == total:
                score = s
            elif hits == 0:
                score = 0
            else:
                score = min(max(base, 1), s - 1) if s >= 2 else base
            return CriterionResult(criterion=name, score=score, reasoning=subset.describe())
        return CriterionResult(criterion=name, score=base, reasoning=subset.describe())

    def _format(self, answer: str, s: int, empty: bool) -> tuple[int, str]:
        if empty:
            return 0, "abstention (empty or declining answer)"
        n = tokens.count(answer)
        if n <= self.max_answer_tokens:
            return s, f"non-empty answer of {n} tokens (limit {self.max_answer_tokens})"
        score = scaled(s, self.max_answer_tokens, n)
        return score, f"answer of {n} tokens exceeds the limit of {self.max_answer_tokens}"


# Criterion -> fact kinds it is scored over (absent = all facts): what the rubric says a
# criterion asks about, and this judge's own reading of two whole-answer criteria.
_SUBSETS: dict[str, tuple[FactKind, ...]] = {
    **SCOPES,
    "accuracy_technical": tuple(sorted(EXACT_KINDS)),
    "continuity_work_state": ("pending", "detail", "identifier"),
}
