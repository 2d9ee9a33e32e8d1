"""Continuation probes: the state at the compaction point.

Pending tasks come from the assistant's checklists, next-step lists and
one-line task lists ("Remaining work: a; b."), and from its plan tool
(``TodoWrite``, ``update_plan``); a task checked off later (in the region or
the tail, never past the point's end) is done. Failing tests come from test
runs; a later run that passes them closes them.
Questions and evidence stay in the region; the tail only updates state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from benchmark.activity.plans import plans
from benchmark.probe.candidate import Candidate, View
from benchmark.probe.models import Evidence, Fact
from benchmark.probe.runs import still_failing
from benchmark.probe.task_lines import inline_tasks
from benchmark.probe.text import clip, normalize, prose, sentences, trim

MAX_TASKS = 12
MAX_TESTS = 6

_CHECK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX✓✔~-]?)\]\s+(\S.*?)\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*?)\s*$")
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*"
    r"(?:todo|to-do|to do|remaining(?: tasks| work| items| steps)?|"
    r"next steps?|pending(?: tasks| items)?|open (?:tasks|items)|action items|tasks|plan|"
    r"checklist|still to do)\b[^\n]{0,40}$",
    re.I,
)
# A stated next step; "Now it handles X" / "Then updated Y" report work done, not work to do.
_INTENT = re.compile(
    r"^(?:next|then|after that|finally)\b,?\s+(?!\w+ed\b)|\b(?:I'll|I will|let's|let me|we need to|"
    r"we should|next step|we can now)\b",
    re.I,
)
# Headings of work already done: a summary's items are not tasks, and no next step is in it.
_DONE_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:summary|changes(?: made)?|key changes|what (?:i|we) "
    r"(?:did|changed|fixed)|what changed|work done|done|completed(?: tasks| work)?|"
    r"accomplished|fixes applied|(?:i've|i have|we've|we have) (?:made|implemented|fixed|"
    r"updated|completed|added)|here's what (?:i|we) (?:did|changed))\b",
    re.I,
)
_DONE_WORD = re.compile(
    r"\b(?:completed|done|finished|accomplished|made|implemented|fixed)\b", re.I
)


def future_lines(content: str) -> Iterator[str]:
    """Prose lines of ``content`` outside a summary of work done ("Summary:", "Changes
    made:"); a later future-work heading ("Next steps:") opens pending work again."""
    for chunk in prose(content):
        done = False
        for line in chunk.splitlines():
            if _done_heading(line):
                done = True
                continue
            if _is_heading(line):
                done = False
            if not done:
                yield line


@dataclass(frozen=True)
class Mention:
    """One appearance of a task in an assistant message."""

    key: str
    text: str  # verbatim task text
    index: int
    done: bool


def task_mentions(view: View) -> list[Mention]:
    """Checklist items and next-step list items of assistant messages up to the point's end."""
    out: list[Mention] = []
    for i in range(view.start, view.end):
        msg = view.transcript.messages[i]
        if msg.role == "assistant" and msg.content:
            out.extend(_mentions(msg.content, i))
    return out


def _mentions(content: str, index: int) -> Iterator[Mention]:
    for chunk in prose(content):
        under_heading = False
        for line in future_lines(chunk):
            check = _CHECK.match(line)
            if check:
                text = trim(check.group(2))
                if text:
                    done = check.group(1) in ("x", "X", "✓", "✔")
                    yield Mention(normalize(text), text, index, done)
                continue
            if _is_heading(line):
                under_heading = True
                continue
            item = _ITEM.match(line)
            if item and under_heading:
                text = trim(item.group(1))
                if text:
                    yield Mention(normalize(text), text, index, False)
                continue
            for text in inline_tasks(line):
                yield Mention(normalize(text), text, index, False)
            if line.strip():
                under_heading = False


def _done_heading(line: str) -> bool:
    """A heading of work done: "Summary:", "## Changes made", "**What I did**", "Done."."""
    match = _DONE_HEADING.match(line)
    if match is None:
        return False
    rest = line[match.end() :]
    marked = line.lstrip().startswith(("#", "**", "__")) and len(line) <= 80
    return ":" in rest[:60] or marked or not rest.strip(" .!*_")


def _is_heading(line: str) -> bool:
    """A future-work heading ("Next steps:", a to-do list heading); "Tasks completed:" is
    not one."""
    stripped = line.strip().strip("*_").strip()
    if not _HEADING.match(line) or _DONE_WORD.search(line):
        return False
    return line.lstrip().startswith("#") or stripped.endswith(":")


@dataclass
class Task:
    key: str
    first: Mention
    last: Mention  # latest mention up to the point's end: decides done or pending
    region: Mention  # latest mention inside the region: the evidence


def tasks(view: View) -> list[Task]:
    """Tasks first mentioned in the region, with their state at the point's end.

    The plan tool's items win over the same task in a written checklist: the
    plan call is the agent's own record of its state.
    """
    found: dict[str, Task] = {}
    for m in task_mentions(view):
        task = found.get(m.key)
        if task is None:
            if view.in_region(m.index):
                found[m.key] = Task(m.key, m, m, m)
            continue
        task.last = m
        if view.in_region(m.index):
            task.region = m
    planned = plan_tasks(view)
    keys = {t.key for t in planned}
    return [t for t in found.values() if t.key not in keys] + planned


def plan_tasks(view: View) -> list[Task]:
    """Items of the latest plan call in the region, with their state at the point's end.

    A later plan call up to the point's end (in the tail) updates an item's
    state; an open item it no longer lists was dropped, so it is not asked
    about; a cancelled item is neither open nor done.
    """
    calls = [p for p in plans(view.actions) if p.index < view.end]
    shown = next((p for p in reversed(calls) if view.in_region(p.index)), None)
    if shown is None:
        return []
    latest = {normalize(i.text): i.state for i in calls[-1].items}
    out: dict[str, Task] = {}
    for item in shown.items:
        key = normalize(item.text)
        state = latest.get(key, "done" if item.state == "done" else "closed")
        if item.state == "closed" or state == "closed" or key in out:
            continue
        region = Mention(key, item.text, shown.index, item.state == "done")
        last = Mention(key, item.text, calls[-1].index, state == "done")
        out[key] = Task(key, region, last, region)
    return list(out.values())


def continuation_candidates(view: View) -> list[Candidate]:
    found = tasks(view)
    return [*_pending(view, found), *_failing(view), *_completed(view, found), *_current(view)]


def _pending(view: View, found: list[Task]) -> Iterator[Candidate]:
    # Over the cap, the most recently opened tasks are the likeliest next steps.
    pending = [t for t in found if not t.last.done][-MAX_TASKS:]
    yield from _checklist(
        view,
        pending,
        kind="pending",
        question=(
            "Which tasks from our plan or checklist were still open (not done yet) at this "
            "point, and what should we do next?"
        ),
        label="Still open",
        priority=True,
    )


def _completed(view: View, found: list[Task]) -> Iterator[Candidate]:
    done = [t for t in found if t.last.done and t.region.done][:MAX_TASKS]
    yield from _checklist(
        view,
        done,
        kind="detail",
        question="Which items of our task checklist had we already completed?",
        label="Completed",
        priority=False,
    )


def _checklist(
    view: View, chosen: list[Task], *, kind: str, question: str, label: str, priority: bool
) -> Iterator[Candidate]:
    """One probe over checklist items, each a fact backed by the region message that lists it."""
    facts, evidence = [], []
    for task in chosen:
        cited = view.cite(task.region.index, clip(task.region.text))
        if cited is not None:
            facts.append(Fact(kind=kind, text=cited[0]))
            evidence.append(cited[1])
    if not facts:
        return
    yield Candidate(
        type="continuation",
        question=question,
        answer=f"{label}: " + "; ".join(f.text for f in facts) + ".",
        facts=tuple(facts),
        evidence=tuple(evidence),
        anchor=evidence[-1].message_index,
        priority=priority,
    )


def _failing(view: View) -> Iterator[Candidate]:
    items = still_failing(view.test_runs, view.start, view.stop, view.end)[:MAX_TESTS]
    facts: list[Fact] = []
    evidence: list[Evidence] = []
    parts = []
    for item in items:
        ev = view.evidence(item.run.result_index, item.line)
        if ev is None:
            continue
        evidence.append(ev)
        if item.test_id:
            facts.append(Fact(kind="pending", text=item.test_id))
        if item.reason and item.reason != item.test_id:
            reason = clip(item.reason)
            facts.append(Fact(kind="detail", text=reason))
            reason_ev = view.evidence(item.run.result_index, reason)
            if reason_ev is not None and reason_ev != ev:
                evidence.append(reason_ev)
        parts.append(
            f"`{item.test_id or item.run.command}`" + (f" ({item.reason})" if item.reason else "")
        )
    if not facts:
        return
    yield Candidate(
        type="continuation",
        question="Which tests were still failing at this point, and with what errors?",
        answer="Still failing: " + "; ".join(parts) + ".",
        facts=tuple(facts),
        evidence=tuple(evidence),
        anchor=max(e.message_index for e in evidence),
        priority=True,
    )


def _current(view: View) -> Iterator[Candidate]:
    """What was being worked on: the last file changed and the last stated next step."""
    last_op = None
    for op in view.file_ops:
        if op.kind in ("write", "edit") and not op.failed and view.in_region(op.index):
            last_op = op
    intent: tuple[int, str] | None = None
    floor = last_op.action_index if last_op else view.start
    for i in range(view.stop - 1, floor - 1, -1):
        msg = view.transcript.messages[i]
        if msg.role == "assistant" and msg.tool_calls:
            # A step stated before (or with) an action the region holds was carried out,
            # or superseded by it: only what was said after the last action is still ahead.
            break
        if msg.role != "assistant" or not msg.content:
            continue
        ahead = "\n".join(future_lines(msg.content))
        found = [s for s in sentences(ahead) if _INTENT.search(s) and len(s) >= 20]
        if found:
            intent = (i, clip(found[-1]))
            break
    if last_op is None or _asked_since(view, last_op.index):
        return
    facts = [Fact(kind="identifier", text=last_op.path)]
    evidence = [view.evidence(last_op.index, last_op.path)]
    if intent is not None:
        facts.append(Fact(kind="detail", text=intent[1]))
        evidence.append(view.evidence(intent[0], intent[1]))
    answer = f"We were changing `{last_op.path}`." + (
        f" The next step we stated: {intent[1]}" if intent else ""
    )
    yield Candidate(
        type="continuation",
        question=(
            "Before the latest messages, which file were we in the middle of changing, and "
            "what were we about to do next?"
        ),
        answer=answer,
        facts=tuple(facts),
        evidence=tuple(e for e in evidence if e is not None),
        anchor=max([last_op.index] + ([intent[0]] if intent else [])),
        priority=True,
    )


def _asked_since(view: View, index: int) -> bool:
    """Whether the user spoke after message ``index`` in the region: a new request (or a
    correction) means the change at ``index`` was finished or dropped, not in progress."""
    observations = {a.result_index for a in view.actions}
    return any(
        view.transcript.messages[i].role == "user" and i not in observations
        for i in range(index + 1, view.stop)
    )
