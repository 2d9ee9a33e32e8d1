"""The offline answerer: BM25 retrieval of verbatim passages from the compacted context.

It reads only ``request.question`` and ``request.context``, so it can know
nothing that compaction dropped. Answers are verbatim context lines, which
makes every score difference traceable to what the context contains.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from benchmark.answerer.answer_kinds import LEAD_SHARE, WHY_Q, Reading, lead_lines
from benchmark.answerer.base import Answer, AnswerRequest
from benchmark.answerer.next_guess import next_step_line
from benchmark.answerer.passages import passages
from benchmark.answerer.query import answer_kinds, query_terms, terms
from benchmark.text import identifiers, tokens
from benchmark.transcript.models import Message

# Score factor of a passage holding the kind of identifier the question asks for.
ANSWER_TYPE_BOOST = 1.5
# Score factor of the agent's own prose for a question asking why or what was decided.
REASONING_BOOST = 2.0
# Cache at most this many distinct contexts: the pipeline asks all probes of a
# compaction point against one context, then moves on.
_CACHE_SIZE = 4
# Budget filling stops when fewer tokens than this remain, after this many
# consecutive passages too long for what remains, or after this many passages
# examined (a context of near-identical lines need not be walked to the end).
_MIN_PASSAGE_TOKENS = 2
_MAX_SKIPS = 50
_MAX_SCAN = 2000
# A quoted word holding digits is a value (an id in a JSON argument), not a count.
_SHAPE = re.compile(r'"[^"\s]*\d[^"\s]*"|\d+')
_LIST_MARK = re.compile(r"^(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+)?(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class _Index:
    """The passages of one context with an inverted index over their terms."""

    passages: tuple[str, ...]
    postings: dict[str, list[tuple[int, int]]]  # term -> [(passage, term frequency)]
    # BM25 length factor ``k1 * (1 - b + b * length / avg_length)`` per passage.
    norms: tuple[float, ...]
    # Passage -> the last passage restating it (same text up to list marks and
    # task boxes): a later "- [x] item" supersedes an earlier "- [ ] item".
    latest: tuple[int, ...]
    # Passage -> id of its text with numbers masked: "2 files changed" and
    # "5 files changed" share one, and an answer shows one passage per shape.
    shapes: tuple[int, ...]
    # Passages of the agent's own prose (assistant text, not tool calls).
    prose: frozenset[int]
    # Filled on demand: token counts, and passages holding each identifier kind.
    token_counts: dict[int, int] = field(default_factory=dict)
    kinds: dict[str, frozenset[int]] = field(default_factory=dict)

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (len(self.passages) - df + 0.5) / (df + 0.5))

    def tokens(self, pid: int) -> int:
        if pid not in self.token_counts:
            self.token_counts[pid] = tokens.count(self.passages[pid])
        return self.token_counts[pid]

    def holding(self, kind: str) -> frozenset[int]:
        if kind not in self.kinds:
            pattern = identifiers.PATTERNS[kind]
            self.kinds[kind] = frozenset(
                pid for pid, text in enumerate(self.passages) if pattern.search(text)
            )
        return self.kinds[kind]


@dataclass
class _Prepared:
    """What the answerer derives from one context, shared by every probe asked of it."""

    reading: Reading
    index: _Index | None = None  # built on the first question that searches


class ExtractiveAnswerer:
    """Answer with the context passages that best match the question (BM25).

    Passages (``benchmark.answerer.passages``) are the lines of each message's
    rendered text, a line longer than ``passage_max_tokens`` cut at whitespace,
    so a list answer can gather many scattered lines. Each is indexed by its
    stemmed content words and whole identifier chunks (``src/app/db.py``,
    ``0.27.2``) plus link terms from what surrounds it: the heading a list item
    sits under, the command an error line came from, the errors a command
    raised, the state of a task box. Each tool call is also indexed by what
    it acted on (its name and short arguments), so "what did we change in x"
    finds the edit itself.

    A question (``benchmark.answerer.query``) searches for its own terms and,
    at half weight, their synonyms; scaffolding ("exact", "at this point") and
    negated words ("not done") are dropped, and a question asking for files or
    a version prefers passages holding one (x ``ANSWER_TYPE_BOOST``).

    A next-action question (``AnswerRequest.form``) is answered by the guess of
    ``benchmark.answerer.next_guess`` instead: one ``verb target`` line.

    The answer is the best passages verbatim, best first (ties: earlier
    first), joined by newlines, within ``max_answer_tokens`` tokens. A passage
    restated later (same text up to list marks and task boxes) gives way to
    its latest restatement; of passages that differ only in their numbers,
    only the best is shown; passages scoring below ``min_score_ratio`` of the
    best are left out. No shared term: an empty answer.
    """

    # Every value an answer shows is context text (benchmark.judge.measured).
    verbatim = True

    def __init__(
        self,
        max_answer_tokens: int = 400,
        passage_max_tokens: int = 150,
        k1: float = 1.2,
        b: float = 0.75,
        min_score_ratio: float = 0.0,
    ) -> None:
        _check_int("max_answer_tokens", max_answer_tokens)
        _check_int("passage_max_tokens", passage_max_tokens)
        _check_number("k1", k1, 0, math.inf)
        _check_number("b", b, 0, 1)
        _check_number("min_score_ratio", min_score_ratio, 0, 1, below_max=True)
        self.max_answer_tokens = max_answer_tokens
        self.passage_max_tokens = passage_max_tokens
        self.k1 = float(k1)
        self.b = float(b)
        self.min_score_ratio = float(min_score_ratio)
        self._cache: list[tuple[tuple[Message, ...], _Prepared]] = []

    def answer(self, request: AnswerRequest) -> Answer:
        prepared = self._prepared(request.context)
        if request.form == "next_action":  # one `verb target` line, guessed from the actions
            return Answer(text=next_step_line(prepared.reading))
        leads = lead_lines(
            request.question,
            request.context,
            int(self.max_answer_tokens * LEAD_SHARE),
            prepared.reading,
        )
        budget = self.max_answer_tokens - (tokens.count("\n".join(leads)) + 1 if leads else 0)
        query = query_terms(request.question)
        found = ""
        if query and budget > _MIN_PASSAGE_TOKENS:
            if prepared.index is None:
                prepared.index = self._build(request.context)
            index = prepared.index
            scores = self._scores(index, query, bool(WHY_Q.search(request.question)))
            if scores:
                floor = max(scores.values()) * self.min_score_ratio
                heap = [(-score, pid) for pid, score in scores.items() if score >= floor]
                heapq.heapify(heap)
                ranked = (heapq.heappop(heap)[1] for _ in range(len(heap)))
                found = self._assemble(index, ranked, budget, set(leads))
        return Answer(text="\n".join([*leads, found] if found else leads))

    def _scores(
        self, index: _Index, query: dict[str, float], reasoning: bool = False
    ) -> dict[int, float]:
        scores: dict[int, float] = {}
        norms = index.norms
        for term, query_weight in query.items():
            postings = index.postings.get(term)
            if not postings:
                continue
            weight = query_weight * index.idf(term) * (self.k1 + 1)
            for pid, tf in postings:
                scores[pid] = scores.get(pid, 0.0) + weight * tf / (tf + norms[pid])
        for kind in answer_kinds(query):
            holding = index.holding(kind)
            for pid in holding.intersection(scores):
                scores[pid] *= ANSWER_TYPE_BOOST
        if reasoning:
            for pid in index.prose.intersection(scores):
                scores[pid] *= REASONING_BOOST
        return scores

    def _assemble(
        self, index: _Index, ranked: Iterator[int], budget: int, shown_text: set[str]
    ) -> str:
        """Greedy fill of the token budget; a passage that does not fit is skipped.

        The scan stops once the budget is nearly spent, ``_MAX_SKIPS``
        passages in a row did not fit, or ``_MAX_SCAN`` were examined. When
        not even the best passage fits, its leading tokens are the answer.
        """
        best: int | None = None
        chosen: list[str] = []
        shown: set[int] = set()
        used = skips = 0
        for examined, pid in enumerate(ranked):
            best = pid if best is None else best
            if budget - used <= _MIN_PASSAGE_TOKENS or skips >= _MAX_SKIPS or examined >= _MAX_SCAN:
                break
            shape = index.shapes[pid]
            if shape in shown or index.latest[pid] != pid or index.passages[pid] in shown_text:
                continue
            cost = index.tokens(pid) + (1 if chosen else 0)
            if used + cost > budget:
                skips += 1
                continue
            skips = 0
            shown.add(shape)
            chosen.append(index.passages[pid])
            used += cost
        if not chosen:
            return "" if best is None else tokens.truncate(index.passages[best], budget).strip()
        # Token counts of parts need not add up exactly across the joins.
        while len(chosen) > 1 and tokens.count("\n".join(chosen)) > budget:
            chosen.pop()
        return "\n".join(chosen)

    def _prepared(self, context: list[Message]) -> _Prepared:
        """The reading and index of ``context``, made once per distinct context (compared
        by content)."""
        key = tuple(context)
        for cached_key, cached in self._cache:
            if cached_key == key:
                return cached
        prepared = _Prepared(Reading(context))
        self._cache = [(key, prepared), *self._cache][:_CACHE_SIZE]
        return prepared

    def _build(self, context: list[Message]) -> _Index:
        texts: list[str] = []
        restated: list[str | None] = []  # None: a link-only passage (restates nothing)
        shape_keys: list[str] = []
        prose: set[int] = set()
        lengths: list[int] = []
        postings: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        last: dict[str, int] = {}
        counts: Iterable[tuple[str, int]]
        for passage in passages(context, self.passage_max_tokens, terms):
            text, links = passage.text, passage.link_terms
            if passage.link_only:
                key, shape = None, _shape(text)
                length, counts = len(links), Counter(links).items()
            else:
                line = _line(text)
                if line is None:
                    continue
                own, counts, key, shape = line
                length = len(own) + len(links)
                if links:  # the line's own frequencies, then its link terms counted in
                    merged = dict(counts)
                    for term in links:
                        merged[term] = merged.get(term, 0) + 1
                    counts = merged.items()
            pid = len(texts)
            texts.append(text)
            restated.append(key)
            shape_keys.append(shape)
            if passage.prose:
                prose.add(pid)
            lengths.append(length)
            for term, tf in counts:
                postings[term].append((pid, tf))
            if key is not None:
                last[key] = pid
        avg = sum(lengths) / len(lengths) if lengths else 1.0
        norms = tuple(self.k1 * (1 - self.b + self.b * n / avg) for n in lengths)
        latest = tuple(pid if key is None else last[key] for pid, key in enumerate(restated))
        shape_ids: dict[str, int] = {}
        shapes = tuple(shape_ids.setdefault(k, len(shape_ids)) for k in shape_keys)
        return _Index(tuple(texts), dict(postings), norms, latest, shapes, frozenset(prose))


# The contexts of a job share most of their lines: each distinct line is analysed once.
@lru_cache(maxsize=1 << 12)
def _line(
    text: str,
) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...], str, str] | None:
    """A passage's own terms, their frequencies (first-seen order), what it restates and
    its shape (numbers masked); None for a line with nothing but numbers of its own
    ("275:    )"), which answers nothing."""
    own = tuple(terms(text))
    # Terms are never empty, so their concatenation is all digits when each one is.
    if not own or "".join(own).isdigit():
        return None
    return own, tuple(Counter(own).items()), _restatement(text), _shape(text)


def _shape(text: str) -> str:
    """``text`` with its numbers masked ("2 files changed" and "5 files changed" share a
    shape), except in a quoted word: ``{"product_id": "8310926033"}`` and the same call
    with another id are two calls, both worth showing."""
    return _SHAPE.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "#", text)


def _restatement(text: str) -> str:
    """What a line says, without its list mark or task box, case and spacing."""
    return " ".join(_LIST_MARK.sub("", text).lower().split())


def _check_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_number(
    name: str, value: object, low: float, high: float, *, below_max: bool = False
) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and below_max:
        ok = low <= value < high
    elif ok:
        ok = low <= value <= high
    if not ok:
        bounds = f"[{low}, {high})" if below_max else f"[{low}, {high}]"
        raise ValueError(f"{name} must be a number in {bounds}, got {value!r}")
