"""Natural-language pieces of a session: decisions, task lists and user phrasing.

Every decision phrasing contains a decision cue (decided, going with, chose,
settle on, opt for, Decision:), a rationale cue (because, since) and an
alternative cue (rather than, instead of, over, considered, rejected), and
carries the choice, rationale and alternatives verbatim, so the planted
fact's parts can be found in the message text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


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
    c, r, alts = d.choice, d.rationale, d.alternatives
    a0 = alts[0]
    two = len(alts) > 1
    options = [
        f"Decision: {c} rather than {a0}, because {r}.",
        f"I'm going with {c} instead of {a0} since {r}.",
        f"I've decided on {c} over {a0} because {r}.",
        f"Let's settle on {c} rather than {a0}, since {r}.",
        f"I'll opt for {c} instead of {a0} because {r}.",
        f"I considered {a0} but decided on {c} because {r}.",
    ]
    if two:
        a1 = alts[1]
        options += [
            f"We considered {a0} and {a1}; we chose {c} because {r}.",
            f"Options were {a0}, {a1} or {c}. I chose {c}, because {r}; I rejected {a0} and {a1}.",
        ]
    text = rng.choice(options)
    if two and alts[1] not in text:
        text += f" I also rejected {alts[1]}."
    return text


def phrase_why_not(rng: random.Random, d: Decision) -> tuple[str, str]:
    """A user's "why not X?" and the assistant's answer restating the decision."""
    a0 = d.alternatives[0]
    question = rng.choice(
        (
            f"Why not {a0}?",
            f"Quick question: why not just go with {a0}?",
            f"Wouldn't {a0} be simpler?",
            f"Did you consider {a0}? That's what we usually do.",
        )
    )
    answer = rng.choice(
        (
            f"I did consider it: {d.against}. So I'm sticking with {d.choice}.",
            f"Good question. {cap(d.against)}, which is why {d.choice} fits better here.",
            f"It was on the table, but {d.against}. {cap(d.choice)} avoids that, since "
            f"{d.rationale}.",
        )
    )
    return question, answer


CHECKLIST_HEADINGS = ("Remaining tasks:", "TODO:", "Next steps:", "Task list:", "Open items:")
CLOSED_HEADINGS = ("Task list:", "Status:", "Remaining tasks:", "Progress:")


def checklist(heading: str, open_items: list[str], done_items: list[str]) -> str:
    lines = [heading]
    lines += [f"- [x] {t}" for t in done_items]
    lines += [f"- [ ] {t}" for t in open_items]
    return "\n".join(lines)


# Deferred follow-ups: (template, how a later episode can close it).
# "readme"/"changelog"/"test" are closed by a housekeeping edit, "ask"/"staging" by the
# user reporting back; some of each are still open when the session ends.
FOLLOW_UPS = (
    ("document {thing} in README.md", "readme"),
    ("add a CHANGELOG.md entry for {thing}", "changelog"),
    ("add a regression test for {thing}", "test"),
    ("ask {dev} whether {vendor} will keep {behaviour}", "ask"),
    ("check {thing} on staging before the {milestone} release", "staging"),
    ("mention {thing} in the release notes for {dev}", "changelog"),
)
USER_REPORTS = {
    "ask": (
        'By the way, I asked around about "{task}": the answer is yes, that stays as it is.',
        'Update on "{task}": confirmed, nothing changes on their side.',
    ),
    "staging": (
        'FYI I checked on staging for "{task}": works fine.',
        'Staging looks good for "{task}".',
    ),
}

ACKS = (
    "Sure, let me look into it.",
    "On it.",
    "Okay, I'll take a look.",
    "Got it. I'll start by reproducing it.",
    "Understood, let me dig in.",
)
WRAPS = (
    "That's done.",
    "All green now.",
    "Fixed and verified.",
    "This part is complete.",
    "Done; the suite passes.",
)
USER_OKS = (
    "Looks good, thanks.",
    "Great, thanks!",
    "Nice. Let's keep going.",
    "Perfect.",
    "Thanks, that makes sense.",
    "Good, moving on.",
)
