"""Decision probes: what was chosen, why, and what was rejected, from the assistant's prose.

A decision is a sentence with a cue (``decided to``, ``going with``,
``Decision:``...) plus a rationale (``because``, ``since``, ``so that``) or a
rejected alternative (``rather than``, ``instead of``, ``over``); a rationale
or a "considered X" may also sit in the neighbouring sentence. Every clause
is a verbatim slice of the sentence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from benchmark.probe.candidate import Candidate, View
from benchmark.probe.models import Fact
from benchmark.probe.text import clip, normalize, sentences, trim

_CUE = re.compile(
    r"\b(?:decision\s*:|decided\s+(?:to|on|that)|decide\s+(?:to|on)|(?:go|going|went)\s+with|"
    r"cho(?:se|ose|osing)(?:\s+to)?|opt(?:ed|ing)?\s+(?:for|to)|settled?\s+on|"
    r"(?:we|I|let's|let us)(?:'ll|\s+will|\s+shall)?\s+use|"
    r"switch(?:ed|ing)?\s+(?:[\w`.-]+\s+){0,3}?to)(?:\*\*)?\s*",
    re.I,
)
_RATIONALE = re.compile(r"\b(?:because|since|so that|given that)\b|,\s*as\b", re.I)
_ALTERNATIVE = re.compile(
    r"\b(?:rather than|instead of|over|as opposed to|(?:I |we )?(?:also )?(?:considered|rejected|"
    r"ruled out))\b",
    re.I,
)
_EXPLICIT = re.compile(r"considered|rejected|ruled out", re.I)
_CONSIDERED = re.compile(r"\b(?:considered|rejected|ruled out)\s+(.+?)(?:[,;:]|\bbut\b|$)", re.I)
_LIST = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_NEXT_RATIONALE = re.compile(
    r"^(?:this is because|that's because|because|the reason is(?: that)?|the reason:)\s+(.+)$",
    re.I,
)
MIN_CLAUSE = 3


@dataclass(frozen=True)
class Decision:
    index: int
    sentence: str
    choice: str
    rationale: str
    alternatives: tuple[str, ...]


def decisions(view: View) -> list[Decision]:
    """Decisions stated in assistant prose in the region, first occurrence of each choice."""
    out: list[Decision] = []
    seen: set[str] = set()
    for i in view.region_indices():
        msg = view.transcript.messages[i]
        if msg.role != "assistant" or not msg.content:
            continue
        said = list(sentences(msg.content))
        for n, sentence in enumerate(said):
            found = _parse(
                sentence, said[n - 1] if n else "", said[n + 1] if n + 1 < len(said) else ""
            )
            if found is None or normalize(found[0]) in seen:
                continue
            seen.add(normalize(found[0]))
            out.append(Decision(i, sentence, *found))
    return out


def _parse(sentence: str, before: str, after: str) -> tuple[str, str, tuple[str, ...]] | None:
    cue = _CUE.search(sentence)
    if cue is None:
        return None
    rest = sentence[cue.end() :]
    why = _RATIONALE.search(rest)
    first_why = why.start() if why else len(rest)
    # Before the rationale, "rather than"/"instead of"/"over" introduce alternatives; inside
    # it they are part of the reason ("... is expected rather than exceptional"), and only
    # an explicit "rejected"/"considered" starts a new alternative.
    alts = [
        m
        for m in _ALTERNATIVE.finditer(rest)
        if m.start() < first_why or _EXPLICIT.search(m.group(0))
    ]
    choice = _clause(rest[: min([first_why] + [m.start() for m in alts])])
    alternatives: list[str] = []
    for k, m in enumerate(alts):
        stop = alts[k + 1].start() if k + 1 < len(alts) else len(rest)
        if m.start() < first_why < stop:
            stop = first_why
        alternatives.extend(_options(_clause(rest[m.end() : stop])))
    rationale = ""
    if why is not None:
        stop = min([m.start() for m in alts if m.start() > first_why] + [len(rest)])
        rationale = _clause(rest[why.end() : stop])
    if not rationale:
        nxt = _NEXT_RATIONALE.match(after)
        if nxt:
            rationale = _clause(nxt.group(1))
    for context in (sentence[: cue.start()], before, after):
        considered = _CONSIDERED.search(context)
        if considered:
            alternatives.extend(_options(_clause(considered.group(1))))
    alternatives = [a for a in dict.fromkeys(alternatives) if normalize(a) != normalize(choice)]
    if len(choice) < MIN_CLAUSE or not (rationale or alternatives):
        return None
    return choice, rationale, tuple(alternatives)


def _clause(text: str) -> str:
    """A clause ends at a semicolon; it is clipped and trimmed, and stays verbatim."""
    return trim(clip(text.split(";", 1)[0]))


def _options(clause: str) -> list[str]:
    """ "A, B and C" -> its options (each verbatim), when every part is a real phrase."""
    parts = [trim(p) for p in _LIST.split(clause)]
    if len(parts) > 1 and all(len(p) >= MIN_CLAUSE for p in parts):
        return parts
    return [clause] if len(clause) >= MIN_CLAUSE else []


def decision_candidates(view: View) -> list[Candidate]:
    return list(_candidates(view))


def _candidates(view: View) -> Iterator[Candidate]:
    for d in decisions(view):
        ev = view.evidence(d.index, d.sentence)
        if ev is None:
            continue
        answer = f"Chosen: {d.choice}."
        if d.rationale:
            answer += f" Why: {d.rationale}."
        if d.alternatives:
            answer += f" Rejected: {'; '.join(d.alternatives)}."
        # The sentence hash picks the style, so one decision is asked the same way at every point.
        ask_by_alternative = bool(d.alternatives) and (
            hashlib.sha256(d.sentence.encode()).digest()[0] % 2 == 1 or not d.rationale
        )
        if ask_by_alternative:
            question = (
                f'Instead of "{clip(d.alternatives[0], 120)}", what did we decide to do, and why?'
            )
            facts = [Fact(kind="choice", text=d.choice)]
            if d.rationale:
                facts.append(Fact(kind="rationale", text=d.rationale))
            facts += [Fact(kind="alternative", text=a) for a in d.alternatives[1:]]
        else:
            tail = ", and which alternatives did we reject?" if d.alternatives else "?"
            question = f'Why did we decide on "{clip(d.choice, 120)}"{tail}'
            facts = [Fact(kind="rationale", text=d.rationale)] if d.rationale else []
            facts += [Fact(kind="alternative", text=a) for a in d.alternatives]
        evidence = [ev]
        for fact in facts:
            if fact.text not in view.texts[d.index]:
                continue
            if fact.text not in ev.quote:
                extra = view.evidence(d.index, fact.text)
                if extra is not None:
                    evidence.append(extra)
        yield Candidate(
            type="decision",
            question=question,
            answer=answer,
            facts=tuple(facts),
            evidence=tuple(evidence),
            anchor=d.index,
        )
