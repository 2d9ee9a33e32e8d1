"""Next-action probes: the step the log takes right after a compaction point is the gold.

A policy is good when the agent carries on as it would have; the log already holds
what it did next. The gold is the first action at message index ``>= point.end``
(:func:`benchmark.activity.steps.step_of`); points whose next step is missing, a
finish step or has no target are skipped, with the reason (:func:`next_action`).

The evidence is that call, past the region: the extractor's ``_checked`` (evidence
in the region) does not apply, so :func:`_evidence` checks it here. The question
offers every verb and the session's own tools, never anything of the step.
"""

from __future__ import annotations

from benchmark.activity.actions import Action, extract, open_file
from benchmark.activity.next_step import VERBS, NextStep
from benchmark.activity.spelling import spelled
from benchmark.activity.steps import OPEN_FILE_COMMANDS, SkipReason, is_finish, step_of, step_verb
from benchmark.probe.candidate import without_summaries
from benchmark.probe.models import Evidence, Fact, Gold, Probe
from benchmark.probe.text import MAX_FACT, quote_around
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.models import Message, Transcript

# The one example a question gives: made up, so it says nothing about the session.
EXAMPLE = "open docs/made_up_example.md"


def next_action(transcript: Transcript, point: CompactionPoint) -> Probe | SkipReason:
    """The point's next-action probe, or why it has none."""
    transcript = without_summaries(transcript)
    found = _gold(transcript.messages, point)
    if isinstance(found, str):
        return found
    step, fact, evidence = found
    return Probe(
        id=f"{transcript.id}/p{point.ordinal}/next_action/0",
        type="next_action",
        question=question(vocabulary(transcript.messages, step)),
        gold=Gold(answer=answer(step), facts=[fact], action=step),
        evidence=[evidence],
        transcript_id=transcript.id,
        point=point.ordinal,
        position=1.0,
    )


def skip_reason(transcript: Transcript, point: CompactionPoint) -> SkipReason | None:
    """Why the point has no next-action probe; None when it has one. Reads only the step
    (a cached probe set does not hold the reason), not the session's vocabulary."""
    found = _gold(without_summaries(transcript).messages, point)
    return found if isinstance(found, str) else None


def _gold(
    messages: list[Message], point: CompactionPoint
) -> tuple[NextStep, Fact, Evidence] | SkipReason:
    """The step after ``point`` with its fact and evidence, or why there is none."""
    action = first_action(messages, point.end)
    if action is None:
        return "no_action"
    opened = _open_file(messages, action.index) if action.tool in OPEN_FILE_COMMANDS else None
    step = step_of(action, opened)
    if not isinstance(step, NextStep):
        return step
    cited = _evidence(messages[action.index].render(), step, action)
    if cited is None:
        return "no_target"
    return step, *cited


def first_action(messages: list[Message], start: int) -> Action | None:
    """The first action called at message index ``>= start`` (its result in view)."""
    for i in range(start, len(messages)):
        if messages[i].role != "assistant":
            continue
        stop = min(len(messages), i + 2)
        texts = {j: messages[j].render() for j in range(i, stop)}
        found = extract(messages, texts, i, stop)
        if found:
            return found[0]
    return None


def vocabulary(messages: list[Message], gold: NextStep) -> list[str]:
    """The verbs a question offers: every one of :data:`VERBS`, then the tools of the session
    no verb covers (finish steps left out: they are never the gold). The list never leaves
    out the gold's verb, and says nothing of it: a list of the verbs used before the point
    missed the gold's whenever the step was the first of its kind (31 of 117 probes)."""
    texts = {i: m.render() for i, m in enumerate(messages)}
    used = {step_verb(a) for a in extract(messages, texts, 0, len(messages)) if not is_finish(a)}
    return [*VERBS, *sorted((used | {gold.verb}) - set(VERBS))]


def question(verbs: list[str]) -> str:
    """The question: the verbs it offers (:func:`vocabulary`) and the format of the answer."""
    listed = ", ".join(verbs or VERBS)
    return (
        "What is the agent's next action, right after this point? "
        f"Verbs: {listed}. Reply with one line `verb target`: a verb from that list and, "
        "as target, the file path, the test id, the pattern searched for or the head of "
        f"the shell command (e.g. `{EXAMPLE}`)."
    )


def answer(step: NextStep) -> str:
    """``\\`edit\\` \\`src/app.py\\` (lines 120-135)``: the gold as prose."""
    region = f" ({step.region})" if step.region else ""
    return f"`{step.verb}` `{step.target}`{region}"


def _evidence(text: str, step: NextStep, action: Action) -> tuple[Fact, Evidence] | None:
    """(the target as the call spells it, a quote of the call). A SWE-agent editor command
    names no file: the target is then the open file as the log spelled it, the quote the
    call's own line."""
    found = spelled(step.target, text)
    if found:
        quote = quote_around(text, found)
    else:
        needles = (action.args.get("_line"), f"[tool call {action.name}]")
        quote = next(
            (q for n in needles if isinstance(n, str) and (q := quote_around(text, n))), None
        )
    if not quote or len(found or step.target) > MAX_FACT:
        return None
    fact = Fact(kind="identifier", text=found or step.target)
    return fact, Evidence(message_index=action.index, quote=quote)


def _open_file(messages: list[Message], index: int) -> str | None:
    """The SWE-agent editor's file when message ``index`` is called: the newest
    ``(Open file: ...)`` before it, or the newest ``open``/``create`` call."""
    for i in range(index - 1, -1, -1):
        msg = messages[i]
        for call in reversed(msg.tool_calls or []):
            if call.function.name in ("open", "create"):
                path = call.function.args().get("path")
                if isinstance(path, str) and path.strip():
                    return path.strip()
        if msg.role in ("user", "tool") and (named := open_file(msg.content or "")):
            return named
    return None
