"""Decision probes: what was chosen, why, and what was rejected, from the assistant's prose.

A decision is a sentence with a cue (``decided to``, ``going with``,
``Decision:``...) plus a rationale (``because``, ``since``, ``so that``) or a
rejected alternative (``rather than``, ``instead of``, ``over``); a rationale
or a "considered X" may also sit in the neighbouring sentence. Every clause
is a verbatim slice of the sentence. A choice that names nothing ("make the
necessary edit") or a rationale cut mid-sentence is no decision to ask about
(``benchmark.probe.wording``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from benchmark.activity.files import is_generated
from benchmark.probe.candidate import Candidate, View
from benchmark.probe.models import Fact
from benchmark.probe.text import (
    MAX_FACT,
    balanced,
    clip,
    normalize,
    outside_pairs,
    sentences,
    trim,
)
from benchmark.probe.wording import has_content, is_cut
from benchmark.text import cues

_LIST = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
# "because it is faster and I rejected X": the rationale ends before the alternative's "and".
_DANGLING_JOIN = re.compile(r"(?:,|\s)\s*(?:and|but)\s*$", re.I)
MIN_CLAUSE = 3
LOOK_BACK = 3  # sentences before an announced fix that may hold its diagnosis


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
            before, after = said[n - 1] if n else "", said[n + 1] if n + 1 < len(said) else ""
            found = _parse(sentence, before, after, msg.content)
            if found is None or normalize(found[0]) in seen:
                continue
            seen.add(normalize(found[0]))
            out.append(Decision(i, sentence, *found))
    return out


def _parse(
    sentence: str, before: str, after: str, content: str
) -> tuple[str, str, tuple[str, ...]] | None:
    """(choice, rationale, alternatives) of a decision sentence; ``None`` when it states
    none: no cue, a choice without content, or neither a whole rationale nor an alternative."""
    cue = cues.DECISION["cue"].search(sentence)
    if cue is None:
        return None
    rest = sentence[cue.end() :]
    why = _first(cues.DECISION["rationale"], rest)
    first_why = why.start() if why else len(rest)
    # Before the rationale, "rather than"/"instead of"/"over" introduce alternatives; inside
    # it they are part of the reason ("... is expected rather than exceptional"), and only
    # an explicit "rejected"/"considered" starts a new alternative.
    alts = [
        m
        for m in outside_pairs(cues.DECISION["alternative"], rest)
        if m.start() < first_why or cues.DECISION["rejected"].search(m.group(0))
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
        rationale = _reason(_DANGLING_JOIN.sub("", rest[why.end() : stop]), content)
    if not rationale:
        nxt = cues.DECISION["next_rationale"].match(after)
        if nxt:
            rationale = _reason(nxt.group(1), content)
    for context in (sentence[: cue.start()], before, after):
        considered = cues.DECISION["considered"].search(context)
        if considered:
            alternatives.extend(_options(_clause(considered.group(1))))
    alternatives = [a for a in dict.fromkeys(alternatives) if normalize(a) != normalize(choice)]
    if len(choice) < MIN_CLAUSE or not _stated(choice, content):
        return None
    if not (rationale or alternatives):
        return None
    return choice, rationale, tuple(alternatives)


def _first(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of a clause cue outside code spans and brackets."""
    return next(outside_pairs(pattern, text), None)


def _clause(text: str) -> str:
    """A clause ends at a semicolon (not one inside a code span); it is clipped and trimmed,
    and stays verbatim."""
    return trim(clip(_first_clause(text)))


def _first_clause(text: str) -> str:
    """``text`` up to its first semicolon outside backticks."""
    for n, part in enumerate(text.split("`")):
        if n % 2 == 0 and ";" in part:
            return "`".join(text.split("`")[:n] + [part.split(";", 1)[0]])
    return text


def _reason(text: str, content: str) -> str:
    """A rationale clause of ``content``, or "" when it is not whole: too long to keep
    without cutting it, or cut in the message itself."""
    clause = _first_clause(text).strip()
    if len(clause) > MAX_FACT:
        return ""
    reason = trim(clause)
    return "" if not reason or is_cut(reason, content) else reason


def _stated(choice: str, content: str) -> bool:
    """Whether a choice says what was chosen, in full (see ``benchmark.probe.wording``)."""
    return has_content(choice) and not is_cut(choice, content)


def _options(clause: str) -> list[str]:
    """ "A, B and C" -> its options (each verbatim), when every part is a real phrase."""
    parts = [trim(p) for p in _LIST.split(clause)]
    if len(parts) > 1 and all(len(p) >= MIN_CLAUSE and balanced(p) for p in parts):
        return parts
    return [clause] if len(clause) >= MIN_CLAUSE else []


def decision_candidates(view: View) -> list[Candidate]:
    stated = decisions(view)
    return [*_candidates(view, stated), *_fix_candidates(view, {d.sentence for d in stated})]


def _candidates(view: View, stated: list[Decision]) -> Iterator[Candidate]:
    for d in stated:
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


# --- fixes: what the assistant decided to change right before an edit, and its diagnosis ---

_RETRY = re.compile(r"\b(?:again|retry|re-?try|once more)\b", re.I)
_WHERE = re.compile(r",?\s+where\s+", re.I)
_LEAD = re.compile(
    r"^(?:(?:however|but|so|thus|therefore|indeed|it seems|it appears|it looks like|"
    r"this means|this shows|i see)(?: that)?,?\s+)+",
    re.I,
)


@dataclass(frozen=True)
class Fix:
    index: int
    path: str
    sentence: str  # the sentence stating the change
    choice: str
    purpose: str
    rationale: str
    alternative: str  # what the change replaces ("instead of ..."), if said


def fixes(view: View, skip: set[str]) -> list[Fix]:
    """The change the assistant announced in the message that edits a file, with its diagnosis.

    Only the message that makes the edit is read (its prose, not its code), so
    the choice is about that edit; the first parsable message per file counts.
    Sentences in ``skip`` (already general decisions) are not asked twice.
    """
    out: list[Fix] = []
    done: set[str] = set()
    for op in view.file_ops:
        if op.kind not in ("write", "edit") or not view.in_region(op.action_index):
            continue
        if op.path in done or is_generated(op.path):  # a backup is no subject of a fix
            continue
        content = view.transcript.messages[op.action_index].content or ""
        found = _fix_in(list(sentences(content)), skip, content)
        if found is not None:  # one change per sentence, even when a patch touches many files
            done.add(op.path)
            skip = skip | {found[0]}
            out.append(Fix(op.action_index, op.path, *found))
    return out


def _fix_in(said: list[str], skip: set[str], content: str) -> tuple[str, str, str, str, str] | None:
    for n, sentence in enumerate(said):
        cue = cues.FIX["change"].search(sentence)
        if cue is None or sentence in skip or _RETRY.search(sentence):
            continue
        rest = cue.group("choice") or cue.group("gerund")
        why = ""
        because = _first(cues.FIX["because"], rest)
        if because:
            rest, why = rest[: because.start()], _reason(rest[because.end() :], content)
        end = _first(cues.FIX["purpose"], rest)
        choice = _clause(rest[: end.start()] if end else rest)
        alternative = ""
        instead = _first(cues.FIX["instead"], choice)
        if instead:
            choice, alternative = (
                _clause(choice[: instead.start()]),
                _clause(choice[instead.end() :]),
            )
        purpose = ""
        if end and end.group(0).lower().lstrip().startswith("to "):
            purpose = _clause(rest[end.start() :].strip()[3:])
        lead = cues.FIX["lead_because"].match(sentence[: cue.start()].strip())
        if not why and lead:
            why = _reason(lead.group("why"), content)
        for before in reversed(said[max(0, n - LOOK_BACK) : n]) if not why else ():
            why = _diagnosis(before, content)
            if why:
                break
        if why and _stated(choice, content):
            return sentence, choice, purpose, why, alternative
    return None


def _diagnosis(sentence: str, content: str) -> str:
    """What a sentence says is wrong: the cause after "due to"/"where", or the sentence itself."""
    if sentence.endswith("?") or cues.FIX["change"].search(sentence):
        return ""
    strong = cues.FIX["cause"].search(sentence)
    if strong:
        return _reason(sentence[strong.end() :], content)
    where = _WHERE.search(sentence)
    if where and cues.FIX["fault"].search(sentence[where.end() :]):
        return _reason(sentence[where.end() :], content)
    if cues.FIX["fault"].search(sentence):
        lead = _LEAD.match(sentence)
        return _reason(sentence[lead.end() :] if lead else sentence, content)
    return ""


def _fix_candidates(view: View, skip: set[str]) -> Iterator[Candidate]:
    for fix in fixes(view, skip):
        facts = [Fact(kind="choice", text=fix.choice), Fact(kind="rationale", text=fix.rationale)]
        if fix.alternative:
            facts.append(Fact(kind="alternative", text=fix.alternative))
        evidence = [view.evidence(fix.index, fix.sentence)]
        for fact in facts:
            evidence.append(view.evidence(fix.index, fact.text))
        answer = f"Chosen: {fix.choice}" + (f" (to {fix.purpose})" if fix.purpose else "")
        answer += f". Why: {fix.rationale}."
        if fix.alternative:
            answer += f" Rejected: {fix.alternative}."
        yield Candidate(
            type="decision",
            question=f"What did we decide to change in `{fix.path}`, and why?",
            answer=answer,
            facts=tuple(facts),
            evidence=tuple(e for e in evidence if e is not None),
            anchor=fix.index,
        )
