"""Recall probes: exact errors, failing commands, pinned versions, values the assistant stated."""

from __future__ import annotations

import re
from collections.abc import Iterator

from benchmark.activity.actions import Action
from benchmark.activity.operations import is_inspection, paths_of
from benchmark.activity.vocabulary import tool_kind
from benchmark.probe.candidate import Candidate, View, listing
from benchmark.probe.command_names import command_name
from benchmark.probe.models import Fact
from benchmark.probe.pins import pins
from benchmark.probe.runs import (
    RUN_COMMAND,
    TEST_COMMAND,
    background_notice,
    call_error,
    error_lines,
    exit_status,
    output_lines,
    reported_error,
)
from benchmark.probe.text import (
    clip,
    fact_kind,
    first_line,
    sentences,
    stateable,
    trim,
    unquote,
)

_SET_TO = re.compile(
    r"\b(?:set|setting|changed?|changing|raised?|raising|lowered|lowering|increased?|"
    r"increasing|decreased?|reduced?|bumped?|updated?)\s+(?:the\s+)?"
    r"(`[^`\n]+`|[A-Za-z_][\w.-]*(?:\s+[A-Za-z_][\w.-]*){0,2}?)\s+"
    r"(?:from\s+(?:`[^`\n]+`|\S+)\s+)?to\s+(`[^`\n]+`|[\w.:/%-]*\d[\w.:/%-]*)",
    re.I,
)
_DUE_TO = re.compile(
    r"^(?P<subject>.{8,120}?)\s+(?:is|was|are|were)\s+(?:likely\s+|probably\s+|most likely\s+)?"
    r"(?P<verb>due to|caused by|because of)\s+(?P<cause>.{8,})$"
)
_ROOT = re.compile(
    r"\broot cause(?:\s+of\s+(?P<topic>[^,.;:]{3,80}?))?\s*(?:is|was|:)\s+(?:that\s+)?"
    r"(?P<cause>.{8,})",
    re.I,
)
_PRONOUNS = frozenset({"it", "this", "that", "these", "those", "they", "them", "which", "what"})
MAX_REPORTED = 3  # user messages whose quoted error is asked about
MAX_OUTPUT_LINES = 3  # a longer output is not one a reader would quote
# Messages after a failure within which a root cause stated without a topic is that
# failure's: about five calls of reading code; later, or after a new request, it is not.
CAUSE_WINDOW = 10


def recall_candidates(view: View) -> list[Candidate]:
    return [
        *_errors(view),
        *_reported(view),
        *_commands_by_error(view),
        *_outputs(view),
        *pins(view),
        *_stated(view),
    ]


def describe(view: View, action: Action) -> str:
    """A cue naming the action in a question: its command, or its tool and file."""
    return _named(view, action)[0]


def _named(view: View, action: Action) -> tuple[str, str]:
    """(cue, the text it quotes from the call), spelled the way the call message holds it.

    A command is named by what tells it apart from the view's other commands
    (:func:`~benchmark.probe.command_names.command_name`), never by a first line
    every inline script shares.
    """
    if action.command is not None:
        cue, quote = _command_name(view, action.command)
        shown = view.shown(action.index, quote)
        return cue.replace(f"`{quote}`", f"`{shown}`", 1), shown
    line = action.args.get("_line")
    if isinstance(line, str) and line:
        shown = view.shown(action.index, first_line(line))
        return f"the `{shown}` command", shown
    paths = paths_of(action.args)
    if paths:
        shown = view.shown(action.index, paths[0])
        return f"the `{action.name}` call on `{shown}`", shown
    return f"the `{action.name}` call", action.name


def _unknown_session(action: Action) -> bool:
    """Keystrokes or a poll to a session whose command is out of view: it names nothing."""
    return tool_kind(action.name) == "stdin" and action.command is None


def _command_name(view: View, command: str, limit: int = 100) -> tuple[str, str]:
    """``command_name``, and where no slice of ``command`` is its own (three ``edit
    287:295`` calls, each line of the first held by a later one), the cue says which of the
    commands sharing the quote it is, in the order they ran."""
    others = [a.command for a in view.actions if a.command is not None]
    cue, quote = command_name(command, others, limit)
    sharing = list(dict.fromkeys(c.strip() for c in others if quote in c))
    if len(sharing) > 1 and command.strip() in sharing:
        place = sharing.index(command.strip())
        nth = _ORDINALS[place] if place < len(_ORDINALS) else f"{place + 1}th"
        cue = f"the {nth} of the {len(sharing)} different commands quoted as {cue}"
    return cue, quote


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _errors(view: View) -> Iterator[Candidate]:
    runs = {run.index: run for run in view.test_runs}
    for action in view.actions:
        if not (view.in_region(action.index) and view.in_region(action.result_index)):
            continue
        ran = action.ran  # a poll's output is the session's command's
        if is_inspection(ran) or _unknown_session(ran):
            continue
        err = call_error(action)
        if err is None:
            continue
        cue, quoted = _named(view, ran)
        run = runs.get(action.index)
        failed = list(run.failures.items())[:3] if run else []
        facts: list[Fact] = []
        evidence = [view.evidence(ran.index, quoted)]
        if failed:  # a test run: each failing test with its own error
            for test_id, (line, reason) in failed:
                facts.append(Fact(kind="identifier", text=test_id))
                if reason:
                    facts.append(Fact(kind="detail", text=clip(reason)))
                evidence.append(view.evidence(action.result_index, line))
            summary = "; ".join(f"`{t}`" + (f" ({clip(r)})" if r else "") for t, (_, r) in failed)
            answer = f"{cue} failed: {summary}."
        else:
            facts.append(Fact(kind="detail", text=err.text))
            evidence.append(view.evidence(action.result_index, err.text))
            answer = f"{cue} failed with `{err.text}`."
        yield Candidate(
            type="recall",
            question=f"What exact error did {cue} fail with?",
            answer=_sentence(answer),
            facts=tuple(facts),
            evidence=tuple(e for e in evidence if e is not None),
            anchor=action.result_index or action.index,
        )


def _reported(view: View) -> Iterator[Candidate]:
    """The error the user quoted in their request (an issue's traceback, a pasted failure).

    User messages that answer a call (text-protocol observations) are command
    output, asked about by ``_errors``; only what the user wrote counts here.
    """
    observations = {a.result_index for a in view.actions}
    facts: list[Fact] = []
    evidence = []
    for i in view.region_indices():
        if view.transcript.messages[i].role != "user" or i in observations:
            continue
        err = reported_error(view.texts[i])
        ev = view.evidence(i, err) if err else None
        if err is None or ev is None or any(f.text == err for f in facts):
            continue
        facts.append(Fact(kind="detail", text=err))
        evidence.append(ev)
        if len(facts) == MAX_REPORTED:
            break
    if not facts:
        return
    yield listing(
        "recall",
        "What exact error message did the user report to us in their request?",
        "The user reported ",
        facts,
        evidence,
        anchor=evidence[0].message_index,
        sep=", then ",
    )


def _outputs(view: View) -> Iterator[Candidate]:
    """What a program printed when we ran it after changing a file: a verification result.

    Only the last run of each command counts (a later failing run drops it: its
    error is asked about instead), and only a short output free of errors; a
    line no answer could state (``stateable``: garbled bytes) is not a fact.
    """
    edits = [
        op
        for op in view.file_ops
        if op.kind in ("write", "edit") and not op.failed and view.in_region(op.action_index)
    ]
    last: dict[str, tuple[Action, str, list[str]]] = {}
    for action in view.actions:
        command = action.ran.command  # a poll's output is the session's command's
        if command is None or not view.in_region(action.index):
            continue
        if not view.in_region(action.result_index) or "\n" in command.strip():
            continue
        if not RUN_COMMAND.match(command.strip()) or TEST_COMMAND.search(command):
            continue
        edited = [op.path for op in edits if op.action_index < action.index]
        lines = output_lines(action.result)
        quiet = (
            error_lines(action.result)
            or not lines
            or len(lines) > MAX_OUTPUT_LINES
            or background_notice(action.result)  # a job's start, not what it printed
            or exit_status(action.result) not in (None, 0)
        )
        if edited and not quiet:
            last[command.strip()] = (action, edited[-1], lines)
        else:
            last.pop(command.strip(), None)
    for command, (action, path, lines) in last.items():
        cue = view.shown(action.ran.index, first_line(command))
        facts, evidence = [], [view.evidence(action.ran.index, cue)]
        for line in lines:
            ev = view.evidence(action.result_index, line)
            if ev is not None and any(ch.isalnum() for ch in line) and stateable(clip(line)):
                facts.append(Fact(kind=fact_kind(clip(line)), text=clip(line)))
                evidence.append(ev)
        if not facts:
            continue
        yield listing(
            "recall",
            f"After we changed `{path}`, what did running `{cue}` print?",
            f"`{cue}` printed ",
            facts,
            (e for e in evidence if e is not None),
            anchor=action.result_index or action.index,
            sep=" / ",
        )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _commands_by_error(view: View) -> Iterator[Candidate]:
    """'Which command failed with a ModuleNotFoundError?' when exactly one command did."""
    by_name: dict[str, dict[str, tuple[Action, str]]] = {}
    for action in view.actions:
        ran = action.ran  # a poll's output is the session's command's
        if ran.command is None or not view.in_region(action.result_index):
            continue
        if not view.in_region(action.index) or is_inspection(ran):
            continue
        if call_error(action) is None:  # a call that succeeded failed with nothing
            continue
        command = ran.command.strip()
        for err in error_lines(action.result):
            if err.kind == "exception" and err.name:
                by_name.setdefault(err.name, {}).setdefault(command, (action, err.text))
    for name, commands in by_name.items():
        if len(commands) != 1:
            continue
        command, (action, err_text) = next(iter(commands.items()))
        cited = view.cite(action.ran.index, _command_name(view, command, 200)[1])
        if cited is None:
            continue
        shown, command_ev = cited
        article = "an" if name[0] in "AEIOU" else "a"
        evidence = (command_ev, view.evidence(action.result_index, err_text))
        yield Candidate(
            type="recall",
            question=f"Which command failed with {article} `{name}`?",
            answer=f"`{shown}` failed with `{err_text}`.",
            facts=(Fact(kind="identifier", text=shown),),
            evidence=tuple(e for e in evidence if e is not None),
            anchor=action.index,
        )


def _stated(view: View) -> Iterator[Candidate]:
    """Values and causes the assistant stated in prose ("set X to 30", "X is due to Y"); a
    root cause is tied to the failure before it only within :data:`CAUSE_WINDOW` messages
    and before the next request (a later one names the failure it was stated after)."""
    failures: dict[int, str] = {}  # result message -> cue of the action that failed there
    for action in view.actions:
        at = action.result_index
        # A run that failed is what gets debugged; a tool's rejected edit is not the problem.
        ran = action.ran.command is not None
        if at is not None and ran and not is_inspection(action.ran) and call_error(action):
            failures[at] = describe(view, action.ran)
    observations = {a.result_index for a in view.actions}
    last_failure, since = "", 0
    for i in view.region_indices():
        msg = view.transcript.messages[i]
        if i in failures:
            last_failure, since = failures[i], i
        elif i - since > CAUSE_WINDOW or (msg.role == "user" and i not in observations):
            last_failure = ""  # too far from the failure, or a new request: another matter
        if msg.role != "assistant" or not msg.content:
            continue
        for sentence in sentences(msg.content):
            yield from _stated_in(view, i, sentence, last_failure)


def _stated_in(view: View, index: int, sentence: str, last_failure: str) -> Iterator[Candidate]:
    for question, fact, answer in _statements(sentence, last_failure):
        yield _cause(view, index, question, fact, answer)


def _statements(sentence: str, last_failure: str) -> Iterator[tuple[str, str, str]]:
    """(question, fact, answer) of each value set, cause or root cause the sentence states."""
    for match in _SET_TO.finditer(sentence):
        key, value = unquote(match.group(1)), unquote(match.group(2))
        if key.lower() in _PRONOUNS or not value or key.lower().split()[0] in _PRONOUNS:
            continue
        value = trim(value)
        if not value:
            continue
        cue = f"`{key}`" if match.group(1).startswith("`") or " " not in key else f"the {key}"
        yield f"What value did we set {cue} to?", value, f"We set {cue} to `{value}`."
    due = _DUE_TO.match(sentence)
    if due:
        subject = due.group("subject").strip()
        first = subject.split()[0].lower()
        if first not in _PRONOUNS and first not in ("and", "but", "so"):
            subject = subject[0].lower() + subject[1:] if subject.startswith("The ") else subject
            verb, cause = due.group("verb"), trim(clip(due.group("cause")))
            yield f"What was {subject} {verb}?", cause, f"It was {verb} {cause}."
    root = _ROOT.search(sentence)
    if root:
        topic = root.group("topic")
        if topic:
            about = f" of {trim(topic)}"
        elif last_failure:
            about = f" of the failure of {last_failure}"
        else:
            about = " of the problem we were debugging"
        cause = trim(clip(root.group("cause")))
        yield f"What did we identify as the root cause{about}?", cause, f"The root cause: {cause}."


def _cause(view: View, index: int, question: str, fact: str, answer: str) -> Candidate:
    cited = view.cite(index, fact)
    text, evidence = cited if cited else (fact, None)
    return Candidate(
        type="recall",
        question=question,
        answer=answer,
        facts=(Fact(kind=fact_kind(fact), text=text),),
        evidence=(evidence,) if evidence else (),
        anchor=index,
    )
