"""Answer-type aware lines for the extractive answerer: what a question asks for, gathered
from the context's own tool calls rather than searched for by words.

Some questions name a *kind* of answer that no single line holds and that a
bag-of-words search cannot rank: "which files did we create or modify" wants
the paths of every writing tool call, "what did we change in `x.py`" wants
the text those calls wrote, "what did running `pytest` print" wants that
command's output, "what were we about to do next" wants the latest stated
intentions. Each is read from the context with :mod:`benchmark.activity`
(the same reading of tool calls and command blocks the rest of the benchmark
uses), so it works on any log the importers read and on any policy's
context: what a policy dropped cannot be gathered, and a summary that keeps
no tool call falls back to retrieval.

Every value shown (a path, a written line, an output line, a sentence) is
verbatim context text; only the short labels ("Created:") are added.
Nothing but the question and the context is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from benchmark.activity.actions import Action, extract
from benchmark.activity.files import STATUS, PathKeys
from benchmark.activity.operations import FileOp, file_ops
from benchmark.activity.plans import plans
from benchmark.probe.runs import output_lines
from benchmark.text import tokens
from benchmark.text.terms import unescape
from benchmark.transcript.models import Message

# A question about files as a set ("which files did we create/modify/read").
_FILES_Q = re.compile(r"\bfiles?\b", re.I)
_FILE_VERBS = re.compile(
    r"\b(?:creat|modif|chang|edit|read|open|examin|touch|wr[io]te|writ|updat)\w*", re.I
)
_READ_ONLY_Q = re.compile(r"\b(?:only read|open or read|without chang|just read|only open)", re.I)
# A question about what was written to one file ("what did we change in `x`").
_CHANGE_Q = re.compile(
    r"\b(?:chang|put|wr[io]te|writ|add|edit|modif|updat|insert)\w*\b.*\b(?:in|to|into)\b", re.I
)
# A question about what a command printed.
_OUTPUT_Q = re.compile(r"\b(?:print|output|show|display|return|produce|report)\w*", re.I)
_AFTER_Q = re.compile(r"\bafter\b", re.I)
# A question about reasons: answered by what the agent said, not by what it wrote.
WHY_Q = re.compile(
    r"\b(?:why|reasons?|decid\w*|decisions?|instead|reject\w*|alternatives?)\b", re.I
)
# A question about where the work stood ("what were we about to do next").
_NEXT_Q = re.compile(
    r"\b(?:next|about to|in the middle of|were we (?:working|doing|changing))\b", re.I
)
# A question about the agent's own task list.
_TASKS_Q = re.compile(r"\b(?:tasks?|plan|checklist|to-?dos?|items?|steps?)\b", re.I)
_OPEN_Q = re.compile(r"\b(?:open|pending|remaining|left|outstanding|unfinished|not done)\b", re.I)
_DONE_Q = re.compile(r"\b(?:completed?|done|finished|closed)\b", re.I)
_QUOTED = re.compile(r"`([^`\n]+)`")
_PATHISH = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.\w{1,8}$|/")
# A sentence saying what the agent is about to do.
_INTENT = re.compile(
    r"^(?:next|now|then|after that|finally|first)\b|\b(?:i'll|i will|let's|let me|we need to|"
    r"we should|we must|next step|we can now|i need to|i should|going to|we'll|we will)\b",
    re.I,
)
_BOX = re.compile(r"^\s*(?:[-*+]\s+)?\[([ xX])\]\s+(.+?)\s*$")
_LABELS = {"created": "Created", "modified": "Modified", "read": "Read"}
_DEF_LINE = re.compile(r"\b(?:def|class|function|func|fn|interface|struct|enum|trait|impl)\s+\w")
_ASSIGN_LINE = re.compile(r"^\s*[A-Za-z_][\w.\[\]\"']*\s*(?::[^=\n]{1,40})?=(?!=)")
# Share of the answer budget the gathered lines may take; retrieval fills the rest.
LEAD_SHARE = 0.75
_MIN_OP_TOKENS = 60
_MAX_INTENT_MESSAGES = 8
_MAX_RECENT_FILES = 8
_OUTPUT_LINES = 12


@dataclass
class Reading:
    """The context's actions and file operations, read once per context: every probe of a
    compaction point asks of the same context, so its questions share one reading."""

    context: list[Message]

    @cached_property
    def texts(self) -> dict[int, str]:
        return {i: m.render() for i, m in enumerate(self.context)}

    @cached_property
    def actions(self) -> list[Action]:
        return extract(self.context, self.texts, 0, len(self.context))

    @cached_property
    def attempts(self) -> list[FileOp]:
        """Every file operation, including those the tool rejected."""
        return file_ops(self.actions, self.texts)

    @cached_property
    def ops(self) -> list[FileOp]:
        """The file operations that took effect."""
        return [op for op in self.attempts if not op.failed]


def lead_lines(
    question: str, context: list[Message], budget: int, reading: Reading | None = None
) -> list[str]:
    """Lines answering the kind of thing ``question`` asks for, best first, within ``budget``
    tokens; empty when the question asks for no such kind or the context holds none.
    ``reading`` is ``Reading(context)`` shared with other questions of that context."""
    reading = Reading(context) if reading is None else reading
    quoted = [unescape(q).strip() for q in _QUOTED.findall(question)]
    paths = [q for q in quoted if _PATHISH.search(q) and " " not in q]
    lines: list[str] = []
    if _OUTPUT_Q.search(question):
        lines += _command_output(reading, quoted, paths if _AFTER_Q.search(question) else [])
    if paths and _CHANGE_Q.search(question) and WHY_Q.search(question):
        lines += _reasons(reading, paths[0])
    elif paths and _CHANGE_Q.search(question):
        lines += _changes(reading, paths[0], budget)
    elif (
        not paths
        and _FILES_Q.search(question)
        and _FILE_VERBS.search(question)
        and not _NEXT_Q.search(question)
    ):
        lines += _inventory(reading, read_first=bool(_READ_ONLY_Q.search(question)))
    tasks = _TASKS_Q.search(question) and (_OPEN_Q.search(question) or _DONE_Q.search(question))
    if tasks:
        lines += _tasks(reading, "open" if _OPEN_Q.search(question) else "done")
    if _NEXT_Q.search(question):
        lines += _recent_files(reading) + _intentions(reading)
    return _within(list(dict.fromkeys(line for line in lines if line.strip())), budget)


def _within(lines: list[str], budget: int) -> list[str]:
    out: list[str] = []
    used = 0
    for line in lines:
        cost = tokens.count(line) + 1
        if used + cost > budget:
            continue
        out.append(line)
        used += cost
    return out


def _spellings(ops: list[FileOp]) -> dict[str, list[str]]:
    """File key -> its distinct spellings; a relative one goes when an absolute one ends in it."""
    keys = PathKeys()
    found: dict[str, list[str]] = {}
    for op in ops:
        found.setdefault(keys.key(op.path), [])
        if op.path not in found[keys.key(op.path)]:
            found[keys.key(op.path)].append(op.path)
    return {
        key: [s for s in spelled if not any(o != s and o.endswith("/" + s) for o in spelled)]
        for key, spelled in found.items()
    }


def _inventory(reading: Reading, read_first: bool) -> list[str]:
    """One line per status: the files created, modified and only read, in first-touch order."""
    keys = PathKeys()
    status: dict[str, str] = {}
    for op in reading.ops:
        kind = STATUS.get(op.kind)
        key = keys.key(op.path)
        if kind is None:
            continue
        if key not in status or (status[key] == "read" and kind == "modified"):
            status[key] = kind
    names = _spellings([op for op in reading.ops if op.kind in STATUS])
    order = ("read", "created", "modified") if read_first else ("created", "modified", "read")
    lines = []
    for wanted in order:
        files = [", ".join(f"`{s}`" for s in names[k]) for k, s in status.items() if s == wanted]
        if files:
            lines.append(f"{_LABELS[wanted]}: " + ", ".join(files))
    return lines


def _changes(reading: Reading, path: str, budget: int) -> list[str]:
    """What the writing operations on ``path`` wrote: their changed lines, each operation
    given an equal share of the budget (its definitions and assignments first)."""
    keys = PathKeys()
    target = None
    written = []
    for op in reading.ops:
        key = keys.key(op.path)
        if target is None and (op.path == path or key == keys.key(path)):
            target = key
        if op.kind in ("write", "edit") and op.changed().strip():
            written.append((key, op))
    target = keys.key(path) if target is None else target
    mine = [op for key, op in written if key == target]
    if not mine:
        return []
    share = max(_MIN_OP_TOKENS, int(budget * LEAD_SHARE) // len(mine))
    out: list[str] = []
    for op in mine:
        out += _salient(op.changed(), share)
    return out


def _reasons(reading: Reading, path: str) -> list[str]:
    """What the agent said where it wrote to ``path`` (attempts the tool rejected included:
    the reasoning was stated all the same): the prose of each such call's message, or of
    the agent's message before it when the call came alone."""
    keys = PathKeys()
    target = keys.key(path)
    out: list[str] = []
    for op in reading.attempts:
        if op.kind not in ("write", "edit") or keys.key(op.path) != target:
            continue
        for i in range(op.action_index, -1, -1):
            message = reading.context[i]
            said = _prose(message) if message.role == "assistant" else []
            if said:
                out += said
                break
    return out


def _prose(message: Message) -> list[str]:
    """Lines of an assistant message's own text, outside code fences."""
    out: list[str] = []
    fenced = False
    for line in (message.content or "").splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and line.strip():
            out.append(line.strip())
    return out


def _salient(text: str, budget: int) -> list[str]:
    """Lines of ``text`` within ``budget`` tokens: definitions, then assignments, then the
    rest, shown in their original order."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]

    def rank(i: int) -> tuple[int, int]:
        line = lines[i]
        return (0 if _DEF_LINE.search(line) else 1 if _ASSIGN_LINE.search(line) else 2, i)

    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(lines)), key=rank):
        cost = tokens.count(lines[i]) + 1
        if used + cost <= budget:
            chosen.append(i)
            used += cost
    return [lines[i].strip() for i in sorted(chosen)]


def _command_output(reading: Reading, quoted: list[str], after_paths: list[str]) -> list[str]:
    """The result lines of actions running a quoted command (after the first change of a
    quoted path, when the question says "after"), the latest run first.

    A command run again and again (a script rerun after each fix) printed
    something different each time; what it printed after the changes is what
    the latest run shows, so that run leads and earlier ones follow as the
    budget allows. The environment's chrome around each output (prompts,
    "(Open file: ...)" status lines) is left out, as the probes leave it out.
    """
    commands = [q for q in quoted if q not in after_paths]
    if not commands:
        return []
    start = 0
    if after_paths:
        keys = PathKeys()
        wanted = {keys.key(p) for p in after_paths}
        first = next(
            (
                op.action_index
                for op in reading.ops
                if op.kind in ("write", "edit") and keys.key(op.path) in wanted
            ),
            None,
        )
        start = first if first is not None else 0
    out: list[str] = []
    for action in reversed(reading.actions):
        if action.index < start or not action.result:
            continue
        said = unescape(action.command or str(action.args.get("_line", ""))).strip()
        if said and any(said == c or said.endswith(c) or c.endswith(said) for c in commands):
            out += output_lines(action.result)[:_OUTPUT_LINES]
    return out


def _recent_files(reading: Reading) -> list[str]:
    """The files most recently written or edited, latest first."""
    keys = PathKeys()
    seen: dict[str, str] = {}
    for op in reading.ops:
        if op.kind in ("write", "edit"):
            key = keys.key(op.path)
            seen.pop(key, None)
            seen[key] = op.path
    latest = list(seen.values())[::-1][:_MAX_RECENT_FILES]
    return [f"Changing: `{path}`" for path in latest]


def _intentions(reading: Reading) -> list[str]:
    """The agent's latest statements of what it would do next, latest first."""
    out: list[str] = []
    messages = 0
    for message in reversed(reading.context):
        if message.role != "assistant" or not message.content:
            continue
        messages += 1
        if messages > _MAX_INTENT_MESSAGES:
            break
        said = [line.strip() for line in message.content.splitlines() if _INTENT.search(line)]
        out += [line for line in said if len(line) >= 20][::-1]
    return out


def _tasks(reading: Reading, want: str) -> list[str]:
    """Items of the latest plan (a plan tool call), then checkbox lines in ``want`` state
    (each item as last restated), the most recently restated first."""
    out: list[str] = []
    found = plans(reading.actions)
    if found:
        out += [item.text for item in found[-1].items if item.state == want]
    latest: dict[str, tuple[str, str]] = {}
    for line in _box_lines(reading.context):
        match = _BOX.match(line)
        if match:
            state = "done" if match.group(1) in "xX" else "open"
            key = " ".join(match.group(2).lower().split())
            latest.pop(key, None)
            latest[key] = (state, line.strip())
    out += [line for state, line in reversed(latest.values()) if state == want]  # latest first
    return out


def _box_lines(context: list[Message]) -> Iterator[str]:
    for message in context:
        yield from message.render().splitlines()
