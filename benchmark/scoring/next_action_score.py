"""A next-action answer scored by rule, and its agreement with the uncompacted context's answer.

A ``next_action`` probe's gold is the step the log takes after the point
(``Gold.action``). Its answer is read as ``verb target``
(:func:`benchmark.activity.next_step.parse_answer`) and scored 5/3/1/0
(:func:`benchmark.activity.next_step.score`), scaled to the rubric's
``scale_max``, on every criterion the rubric lists for the type: no judge reads
it (``benchmark.rubric.JUDGE_FREE_TYPES``), so the score is the same under an
LLM judge, a panel or the offline reference judge. An answer with no readable
``verb target`` line is a wrong answer (0), not a failure: the answerer was
asked for the format and replied.

The log's step is one valid continuation among several, so each probe also
records its *control agreement*: the same score with the answer given from the
uncompacted session (``transcript.messages[:point.end]``) in place of the log's
step. It asks "does the agent carry on as it would have without compaction",
which does not penalise a policy for a step the agent might not have taken anyway.
"""

from __future__ import annotations

from benchmark.activity.next_step import NextStep, parse_answer, score
from benchmark.judge.base import CriterionResult, Judgment
from benchmark.probe.models import Probe
from benchmark.rubric import Rubric

_POINTS = 5  # next_step.score's maximum


def read_step(text: str, gold: NextStep) -> NextStep | None:
    """The step an answer names; the gold's verb counts as known (a session tool no verb
    covers is listed in the question's vocabulary)."""
    return parse_answer(text, known=(gold.verb,))


def scaled(points: int, scale_max: int) -> float:
    """A 0-5 step score on the rubric's 0-``scale_max`` scale."""
    return points * scale_max / _POINTS


def action_judgment(probe: Probe, answer: str, rubric: Rubric) -> Judgment:
    """The judgment of a next-action answer: its step score on the type's criteria."""
    gold = probe.gold.action
    if gold is None:
        return Judgment(failed=True, error=f"next_action probe {probe.id} has no gold step")
    step = read_step(answer, gold)
    points = score(step, gold)
    said = step.line() if step is not None else "no 'verb target' line"
    reasoning = f"answer: {said}; log: {gold.line()}; {points}/{_POINTS}"
    value = scaled(points, rubric.scale_max)
    return Judgment(
        results=[
            CriterionResult(criterion=c, score=value, reasoning=reasoning)
            for c in rubric.probe_criteria[probe.type]
        ]
    )


def control_agreement(probe: Probe, answer: str, control: str, scale_max: int) -> float | None:
    """The answer's step scored against the step the uncompacted context's answer names;
    None when that answer names none (nothing to agree with)."""
    gold = probe.gold.action
    if gold is None:
        return None
    reference = read_step(control, gold)
    if reference is None:
        return None
    return scaled(score(read_step(answer, reference), reference), scale_max)
