"""Probes for sessions of API tools and a customer: what such an agent needs after compaction.

Coding sessions are asked about files, commands and errors; a session of function
tools that touch no file (tau2-bench's airline and retail agents, an agent on an
MCP server's API) holds none of those, and what its agent needs later is elsewhere:

* **recall**, a value a call returned, asked by the call and the key it sat under
  ("What `payment_methods.id` value(s) did the `get_user_details` call with user_id
  `u_1` return?"); and the details the customer gave in reply to one of our questions;
* **artifact**, the calls already made with a tool and their arguments (a call the
  agent no longer knows it made is made again: the arm's repeated tool calls);
* **continuation**, what the customer asked for and the conditions they set.

Only what the compacted region alone holds is asked: a value the tail (kept by every
policy) restates cannot be lost, so it is no fact here. Gold values are verbatim
result or argument values (exact, checked by ``extract._checked``), questions name the
call, never the value. Customer turns are read only in a session with no file or shell
tool in view (:func:`~benchmark.probe.tool_values.conversational`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from benchmark.activity.actions import Action
from benchmark.probe.candidate import Candidate, View, listing
from benchmark.probe.models import Evidence, Fact
from benchmark.probe.text import clip, fact_kind, sentences
from benchmark.probe.tool_values import (
    api_actions,
    argument_values,
    conversational,
    cue,
    distinct,
    in_tail,
    leaves,
    result_data,
    shown_path,
    value_text,
)

MAX_GROUP = 5  # values one question asks for; a longer list is a catalogue, not a fact
MAX_CALL_VALUES = 8  # argument values of one tool's calls
MAX_REQUESTS = 4  # customer sentences in the request question
# Tokens of a customer's message that are values: ids, numbers, emails, dates.
_VALUE = re.compile(r"[#@\w][\w.@#/+:-]*\d[\w.@#/+:-]*|[\w.+-]+@[\w-]+\.[\w.]+")
# Two or more capitalised words in a row: a name ("Ethan Garcia", "New York").
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)+\b")
_NOT_NAMES = frozenset({"I", "You", "Hi", "Hello", "Thanks", "Thank", "Yes", "No", "Please"})
# A sentence asking for something or setting a condition on it.
_REQUEST = re.compile(
    r"\b(?:I(?:'d| would)? (?:like|want|need|prefer)|I'm (?:looking|trying|hoping)|"
    r"(?:can|could|would) you|please|make sure|(?:do not|don't)|instead|only if|as long as|"
    r"rather than|unless|if (?:that|it|this)(?:'s| is) not possible)\b",
    re.I,
)


def tool_recall_candidates(view: View) -> list[Candidate]:
    return [*_returned(view), *_customer_details(view)]


def tool_artifact_candidates(view: View) -> list[Candidate]:
    return list(_calls_made(view))


def tool_continuation_candidates(view: View) -> list[Candidate]:
    return list(_requests(view))


def _returned(view: View) -> Iterator[Candidate]:
    """Per call in the region and key path of its JSON result: the values it returned."""
    actions = api_actions(view)
    for action in actions:
        if not (view.in_region(action.index) and view.in_region(action.result_index)):
            continue
        data = result_data(action)
        if data is None:
            continue
        groups: dict[str, list[str]] = {}
        for path, value in leaves(data):
            text = value_text(value)
            if text is not None:
                found = groups.setdefault(shown_path(path), [])
                if text not in found:
                    found.append(text)
        named = cue(view, action, actions)
        for key, values in groups.items():
            if len(values) > MAX_GROUP:
                continue
            if len(values) > 1 and not all(distinct(v) for v in values):
                continue  # plain words in a list ("blue", "red"): no one of them is the answer
            candidate = _returned_one(view, action, named, key, values)
            if candidate is not None:
                yield candidate


def _returned_one(
    view: View, action: Action, named: str, key: str, values: list[str]
) -> Candidate | None:
    assert action.result_index is not None
    facts, evidence = [], []
    for text in values:
        ev = view.evidence(action.result_index, text)
        if ev is None or in_tail(view, text):
            continue
        facts.append(Fact(kind=fact_kind(text), text=text))
        evidence.append(ev)
    if not facts:
        return None
    call = view.evidence(action.index, action.name)
    what = f"`{key}` value(s)" if key else "value"
    return listing(
        "recall",
        f"What {what} did {named} return?",
        f"{named[:1].upper()}{named[1:]} returned ",
        facts,
        [e for e in (call, *evidence) if e is not None],
        anchor=action.result_index,
    )


def _calls_made(view: View) -> Iterator[Candidate]:
    """Per tool called in the region: the argument values of those calls."""
    by_tool: dict[str, list[Action]] = {}
    for action in api_actions(view):
        if view.in_region(action.index):
            by_tool.setdefault(action.name, []).append(action)
    for name, calls in by_tool.items():
        facts: list[Fact] = []
        evidence: list[Evidence] = []
        for action in calls:
            for text in argument_values(action.args):
                if any(f.text == text for f in facts) or in_tail(view, text):
                    continue
                ev = view.evidence(action.index, text)
                if ev is not None:
                    facts.append(Fact(kind=fact_kind(text), text=text))
                    evidence.append(ev)
        if not facts:
            continue
        facts, evidence = facts[-MAX_CALL_VALUES:], evidence[-MAX_CALL_VALUES:]
        yield listing(
            "artifact",
            f"Which `{name}` calls had we already made, with which arguments?",
            f"`{name}` was called with ",
            facts,
            evidence,
            anchor=calls[-1].index,
        )


def _customer_turns(view: View) -> Iterator[int]:
    """Region messages a customer wrote (not tool results), in a conversational session."""
    if not conversational(view):
        return
    for i in view.region_indices():
        msg = view.transcript.messages[i]
        if msg.role == "user" and (msg.content or "").strip():
            yield i


def _customer_details(view: View) -> Iterator[Candidate]:
    """The values and names a customer gave in reply to a question of ours."""
    for i in _customer_turns(view):
        before = view.transcript.messages[i - 1] if view.in_region(i - 1) else None
        asked = (before.content or "").strip() if before and before.role == "assistant" else ""
        if "?" not in asked or "\n" in asked.strip():
            continue  # no question of ours, or more than a one-line one to name it by
        text = view.texts[i]
        found = [m.group(0).rstrip(".,;:") for m in _VALUE.finditer(text)]
        names = (m.group(0) for m in _NAME.finditer(text))
        found += [n for n in names if n.split()[0] not in _NOT_NAMES]
        facts, evidence = [], []
        for value in dict.fromkeys(found):
            ev = view.evidence(i, value)
            if ev is not None and len(value) >= 3 and not in_tail(view, value):
                facts.append(Fact(kind=fact_kind(value), text=value))
                evidence.append(ev)
        if facts:
            yield listing(
                "recall",
                f'What did the customer tell us when we asked "{clip(asked, 160)}"?',
                "The customer gave ",
                facts,
                evidence,
                anchor=i,
            )


def _requests(view: View) -> Iterator[Candidate]:
    """What the customer asked for and the conditions they set, in their own sentences."""
    facts: list[Fact] = []
    evidence: list[Evidence] = []
    for i in _customer_turns(view):
        for sentence in sentences(view.texts[i]):
            text = clip(sentence)
            if not _REQUEST.search(text) or in_tail(view, text):
                continue
            ev = view.evidence(i, text)
            if ev is not None and all(f.text != text for f in facts):
                facts.append(Fact(kind="pending", text=text))
                evidence.append(ev)
    if not facts:
        return
    facts, evidence = facts[-MAX_REQUESTS:], evidence[-MAX_REQUESTS:]
    yield listing(
        "continuation",
        "What has the customer asked us to do, and on which conditions?",
        "The customer asked: ",
        facts,
        evidence,
        anchor=evidence[0].message_index,
        sep=" / ",
    )
