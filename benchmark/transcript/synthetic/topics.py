"""Natural-language pieces of a session: decisions, task lists and user phrasing.

Every decision phrasing contains a decision cue (decided, going with, chose,
settle on, opt for, Decision:), a rationale cue (because, since) and an
alternative cue (rather than, instead of, over, considered, rejected), and
carries the choice, rationale and alternatives verbatim, so the planted
fact's parts can be found in the message text. The phrasings are in ``data/topics.yaml``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import benchmark.transcript.synthetic.resources as resources

_T: dict = resources.yaml_data("topics.yaml")


@dataclass(frozen=True)
class Decision:
    topic: str
    choice: str
    alternatives: tuple[str, ...]
    rationale: str
    against: str  # why the first alternative loses, as a clause


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text and text[0].isalpha() else text


def phrase_decision(rng: random.Random, d: Decision) -> str:
    alts = d.alternatives
    values = {"c": d.choice, "r": d.rationale, "a0": alts[0], "a1": alts[1] if alts[1:] else ""}
    options = _T["decision"] + (_T["decision_two"] if len(alts) > 1 else [])
    text = rng.choice(options).format(**values)
    if len(alts) > 1 and alts[1] not in text:
        text += _T["also_rejected"].format(**values)
    return text


def phrase_why_not(rng: random.Random, d: Decision) -> tuple[str, str]:
    """A user's "why not X?" and the assistant's answer restating the decision."""
    question = rng.choice(_T["why_not"]).format(a0=d.alternatives[0])
    answer = rng.choice(_T["why_not_answer"]).format(
        against=d.against,
        Against=cap(d.against),
        choice=d.choice,
        Choice=cap(d.choice),
        rationale=d.rationale,
    )
    return question, answer


CHECKLIST_HEADINGS: tuple[str, ...] = tuple(_T["checklist_headings"])
CLOSED_HEADINGS: tuple[str, ...] = tuple(_T["closed_headings"])


def checklist(heading: str, open_items: list[str], done_items: list[str]) -> str:
    lines = [heading]
    lines += [_T["checklist_done"].format(item=t) for t in done_items]
    lines += [_T["checklist_open"].format(item=t) for t in open_items]
    return "\n".join(lines)


# Deferred follow-ups: (template, how a later episode can close it); see data/topics.yaml.
FOLLOW_UPS: tuple[tuple[str, str], ...] = tuple((text, kind) for text, kind in _T["follow_ups"])
USER_REPORTS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _T["user_reports"].items()}
ACKS: tuple[str, ...] = tuple(_T["acks"])
WRAPS: tuple[str, ...] = tuple(_T["wraps"])
USER_OKS: tuple[str, ...] = tuple(_T["user_oks"])
