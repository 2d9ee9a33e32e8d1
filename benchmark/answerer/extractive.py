"""The offline answerer: BM25 retrieval of verbatim passages from the compacted context.

It reads only ``request.question`` and ``request.context``, so it can know
nothing that compaction dropped. Answers are verbatim context lines, which
makes every score difference traceable to what the context contains.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from benchmark import tokens
from benchmark.answerer.base import Answer, AnswerRequest
from benchmark.answerer.passages import passages
from benchmark.judge.matching import content_terms, identifier_terms, stem
from benchmark.transcript.models import Message

# Question scaffolding that says how to answer or when, not what about.
_QUERY_STOP_TEXT = """
exact exactly describe list tell mention specific each
point still yet already far currently moment part session
"""
QUERY_STOP_WORDS: frozenset[str] = frozenset(stem(w) for w in _QUERY_STOP_TEXT.split())
# "not done", "without changing": the negated word is not what the answer contains.
_NEGATED = re.compile(r"\b(?:not|never|without|no)\s+\w+", re.I)
# Words a question and its answer often phrase differently ("change" / "edited",
# "completed" / "done", "why" / "because"). A question term also searches for
# its group's other members at ``SYNONYM_WEIGHT``.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("change", "edit", "modify", "update", "replace"),
    ("create", "new", "write", "add"),
    ("done", "complete", "finish", "close"),
    ("open", "pending", "todo", "remaining", "outstanding", "unfinished", "left"),
    ("decide", "decision", "choose", "chose", "settle", "pick"),
    ("why", "because", "reason", "rationale", "since"),
    ("fail", "error", "broke", "break"),
    ("alternative", "consider", "instead", "rejected", "option"),
)
SYNONYM_WEIGHT = 0.5
_DIGITS = re.compile(r"\d+")
_LIST_MARK = re.compile(r"^(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+)?(?:\[[ xX]\]\s+)?")
_SYNONYMS: dict[str, tuple[str, ...]] = {
    stem(w): tuple(stem(o) for o in group if o != w) for group in SYNONYMS for w in group
}
# Cache at most this many distinct contexts: the pipeline asks all probes of a
# compaction point against one context, then moves on.
_CACHE_SIZE = 4
# Budget filling stops when fewer tokens than this remain, or after this many
# consecutive passages too long for what remains.
_MIN_PASSAGE_TOKENS = 2
_MAX_SKIPS = 50


@dataclass(frozen=True)
class _Index:
    """Passages of one context with a term -> [(passage, term frequency)] inverted index."""

    passages: tuple[str, ...]
    postings: dict[str, list[tuple[int, int]]]
    # Passage -> the last passage restating it (same text up to list marks and
    # task boxes): a later "- [x] item" supersedes an earlier "- [ ] item".
    latest: tuple[int, ...]
    # Passage -> id of its text with numbers masked ("2 files changed" and
    # "5 files changed" share one): an answer shows one passage per shape.
    shapes: tuple[int, ...]
    # BM25 length factor ``k1 * (1 - b + b * length / avg_length)`` per passage.
    norms: tuple[float, ...]
    # Token counts, filled as passages are considered for an answer.
    token_counts: dict[int, int] = field(default_factory=dict)

    def tokens(self, pid: int) -> int:
        if pid not in self.token_counts:
            self.token_counts[pid] = tokens.count(self.passages[pid])
        return self.token_counts[pid]

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        n = len(self.passages)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))


class ExtractiveAnswerer:
    """Answer with the context passages that best match the question (BM25).

    Passages are single lines of each message's rendered text; a line longer
    than ``passage_max_tokens`` is cut at whitespace into bounded pieces, so a
    list answer can gather many scattered lines within the budget. A list
    item (``- x``, ``1. x``) or an indented line under a heading (a line ending
    with ``:`` or starting with ``#``) is also indexed with the heading's
    terms, so ``Files created:`` followed by bare paths answers "which files
    did we create". Terms are stemmed content words plus whole identifier
    chunks (``src/app/db.py``, ``httpx==0.27.2``). The answer is the top
    passages verbatim, best first (ties: earlier first), duplicates dropped,
    joined by newlines, within ``max_answer_tokens`` tokens; passages scoring
    below ``min_score_ratio`` of the best are left out. No shared term: empty
    answer.
    """

    def __init__(
        self,
        max_answer_tokens: int = 400,
        passage_max_tokens: int = 150,
        k1: float = 1.2,
        b: float = 0.75,
        min_score_ratio: float = 0.0,
    ) -> None:
        _positive_int("max_answer_tokens", max_answer_tokens)
        _positive_int("passage_max_tokens", passage_max_tokens)
        if not isinstance(k1, (int, float)) or isinstance(k1, bool) or k1 < 0:
            raise ValueError(f"k1 must be a number >= 0, got {k1!r}")
        if not isinstance(b, (int, float)) or isinstance(b, bool) or not 0 <= b <= 1:
            raise ValueError(f"b must be a number in [0, 1], got {b!r}")
        if (
            not isinstance(min_score_ratio, (int, float))
            or isinstance(min_score_ratio, bool)
            or not 0 <= min_score_ratio < 1
        ):
            raise ValueError(f"min_score_ratio must be a number in [0, 1), got {min_score_ratio!r}")
        self.max_answer_tokens = max_answer_tokens
        self.passage_max_tokens = passage_max_tokens
        self.k1 = float(k1)
        self.b = float(b)
        self.min_score_ratio = float(min_score_ratio)
        self._cache: list[tuple[tuple[Message, ...], _Index]] = []

    def answer(self, request: AnswerRequest) -> Answer:
        query = _query(request.question)
        if not query:
            return Answer(text="")
        index = self._index(request.context)
        scores = self._scores(index, query)
        if not scores:
            return Answer(text="")
        floor = max(scores.values()) * self.min_score_ratio
        heap = [(-score, pid) for pid, score in scores.items() if score >= floor]
        heapq.heapify(heap)
        ranked = (heapq.heappop(heap)[1] for _ in range(len(heap)))
        return Answer(text=self._assemble(index, ranked))

    def _scores(self, index: _Index, query: dict[str, float]) -> dict[int, float]:
        scores: dict[int, float] = {}
        for term, query_weight in query.items():
            postings = index.postings.get(term)
            if not postings:
                continue
            weight = query_weight * index.idf(term) * (self.k1 + 1)
            norms = index.norms
            for pid, tf in postings:
                scores[pid] = scores.get(pid, 0.0) + weight * tf / (tf + norms[pid])
        return scores

    def _assemble(self, index: _Index, ranked: Iterator[int]) -> str:
        """Greedy fill of the token budget; a passage that does not fit is skipped.

        The scan stops once the budget is nearly spent or ``_MAX_SKIPS``
        passages in a row did not fit. When not even the best passage fits,
        its leading tokens are the answer.
        """
        budget = self.max_answer_tokens
        best: int | None = None
        chosen: list[str] = []
        seen: set[int] = set()
        used = skips = 0
        for pid in ranked:
            best = pid if best is None else best
            if budget - used <= _MIN_PASSAGE_TOKENS or skips >= _MAX_SKIPS:
                break
            text = index.passages[pid]
            shape = index.shapes[pid]
            if shape in seen or index.latest[pid] != pid:
                continue
            cost = index.tokens(pid) + (1 if chosen else 0)
            if used + cost > budget:
                skips += 1
                continue
            skips = 0
            seen.add(shape)
            chosen.append(text)
            used += cost
        if not chosen:
            return "" if best is None else tokens.truncate(index.passages[best], budget).strip()
        # Token counts of parts need not add up exactly across the joins.
        while len(chosen) > 1 and tokens.count("\n".join(chosen)) > budget:
            chosen.pop()
        return "\n".join(chosen)

    def _index(self, context: list[Message]) -> _Index:
        key = tuple(context)
        for cached_key, cached in self._cache:
            if cached_key == key:
                return cached
        index = self._build(context)
        self._cache = [(key, index), *self._cache][:_CACHE_SIZE]
        return index

    def _build(self, context: list[Message]) -> _Index:
        texts: list[str] = []
        last: dict[str, int] = {}
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths: list[int] = []
        for passage in passages(context, self.passage_max_tokens, _terms):
            own = [] if passage.link_only else _terms(passage.text)
            # A line with nothing but numbers of its own ("275:    )") answers nothing.
            if all(t.isdigit() for t in own) and not passage.link_only:
                continue
            terms = own + list(passage.link_terms)
            pid = len(texts)
            texts.append(passage.text)
            last[_restatement_key(passage.text)] = pid
            lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                postings.setdefault(term, []).append((pid, tf))
        avg = sum(lengths) / len(lengths) if lengths else 1.0
        norms = tuple(self.k1 * (1 - self.b + self.b * n / avg) for n in lengths)
        latest = tuple(last[_restatement_key(t)] for t in texts)
        shape_ids: dict[str, int] = {}
        shapes = tuple(shape_ids.setdefault(_DIGITS.sub("#", t), len(shape_ids)) for t in texts)
        return _Index(tuple(texts), postings, latest, shapes, norms)


def _restatement_key(text: str) -> str:
    return " ".join(_LIST_MARK.sub("", text).lower().split())


def _query(question: str) -> dict[str, float]:
    """Question terms with weights: 1 for its own terms, ``SYNONYM_WEIGHT`` for synonyms."""
    query = {t: 1.0 for t in _terms(_NEGATED.sub(" ", question)) if t not in QUERY_STOP_WORDS}
    for term in list(query):
        for other in _SYNONYMS.get(term, ()):
            query.setdefault(other, SYNONYM_WEIGHT)
    return query


def _terms(text: str) -> list[str]:
    return content_terms(text) + identifier_terms(text)


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
