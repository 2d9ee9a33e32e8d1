"""One probe, answered from its context and judged blind; many probes at once on the LLM loop.

A failed answer or judgment is recorded on the probe's result and counted,
never scored as 0. A next_action probe is scored by rule, never by the judge
(``benchmark.scoring.next_action_score``), and with ``uncompacted`` also answered from the
uncompacted session for its control agreement. Offline stages run inline (nothing
to overlap); stages with ``a<method>`` coroutines run concurrently
(``benchmark.run.scheduling.ProbeScheduler``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from benchmark.answerer.base import Answer, Answerer, AnswerRequest
from benchmark.judge.base import Judge, JudgeRequest, Judgment
from benchmark.llm.connect import purpose_of
from benchmark.llm.loop import run
from benchmark.llm.usage import CallPurpose
from benchmark.probe.models import Probe
from benchmark.rubric import JUDGE_FREE_TYPES, Rubric, aggregate
from benchmark.run.results import ProbeResult
from benchmark.scoring.next_action_score import action_judgment, control_agreement
from benchmark.transcript.models import Message


def evaluate(
    probe: Probe,
    context: list[Message],
    answerer: Answerer,
    judge: Judge,
    rubric: Rubric,
    rollup: Rubric | None = None,
    uncompacted: list[Message] | None = None,
) -> ProbeResult:
    """Answer from the compacted context alone, then judge blind; failures are recorded.

    The judge scores every criterion of ``rubric``; the probe's score rolls up over
    ``rollup`` (default ``rubric``), which leaves out dimensions the judge cannot measure.
    """
    coro = aevaluate(probe, context, answerer, judge, rubric, True, rollup, uncompacted=uncompacted)
    if has_async(answerer, judge):
        return run(coro)
    try:  # every stage is synchronous: the coroutine never suspends, so drive it here
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("a synchronous evaluation suspended")  # pragma: no cover


def has_async(answerer: Answerer, judge: Judge) -> bool:
    return hasattr(answerer, "aanswer") or hasattr(judge, "ajudge")


async def aevaluate(
    probe: Probe,
    context: list[Message],
    answerer: Answerer,
    judge: Judge,
    rubric: Rubric,
    inline: bool = False,
    rollup: Rubric | None = None,
    purpose: CallPurpose | None = None,
    uncompacted: list[Message] | None = None,
) -> ProbeResult:
    """:func:`evaluate` as a coroutine (see :func:`stage_call` for ``inline``); ``purpose``
    (the probe, its point and arm) goes with the LLM stages' calls to their trace.
    ``uncompacted``: a next_action probe is answered from it too, for its control agreement
    (when no control arm answers it)."""
    answer = await answer_probe(probe, context, answerer, inline, purpose)
    judge_free = probe.type in JUDGE_FREE_TYPES
    agreement = None
    if answer.failed:
        judgment = Judgment(failed=True, error="no answer to judge")
    elif judge_free:
        judgment = action_judgment(probe, answer.text, rubric)
        if uncompacted is not None:
            arm = replace(purpose, arm="control") if purpose is not None else None
            control = await answer_probe(probe, uncompacted, answerer, inline, arm)
            if not control.failed:
                agreement = control_agreement(probe, answer.text, control.text, rubric.scale_max)
    else:
        request = JudgeRequest.model_construct(
            probe_question=probe.question,
            model_response=answer.text,
            compacted_context=context,
            ground_truth=probe.gold,
            rubric_criteria=rubric.probe_criteria[probe.type],
            scale_max=rubric.scale_max,
        )
        try:
            judgment = await stage_call(judge, "judge", request, inline, purpose)
        except Exception as exc:
            judgment = Judgment(failed=True, error=f"{type(exc).__name__}: {exc}")
    score = None
    if not (answer.failed or judgment.failed):
        score = aggregate(rollup or rubric, [judgment.scores()]).overall
    return ProbeResult(
        probe=probe, answer=answer, judgment=judgment, score=score, control_agreement=agreement
    )


async def answer_probe(
    probe: Probe,
    context: list[Message],
    answerer: Answerer,
    inline: bool,
    purpose: CallPurpose | None,
) -> Answer:
    """The answer from ``context``, in the form the probe's type asks for; a failure is an
    answer marked failed (counted, never scored as 0)."""
    form = "next_action" if probe.type == "next_action" else "text"
    # Built from models validated already: validating again ran every context message's
    # validator twice per probe on the LLM loop (model_construct skips that, nothing else).
    asked = AnswerRequest.model_construct(question=probe.question, context=context, form=form)
    try:
        return await stage_call(answerer, "answer", asked, inline, purpose)
    except Exception as exc:
        return Answer(failed=True, error=f"{type(exc).__name__}: {exc}")


async def stage_call(
    stage: Any, method: str, request: Any, inline: bool, purpose: CallPurpose | None = None
) -> Any:
    """``stage.a<method>(request)`` when the stage has it; else ``stage.<method>(request)``,
    on a worker thread so a blocking plug-in cannot stall the loop (``inline``: here)."""
    amethod = getattr(stage, f"a{method}", None)
    if amethod is not None:
        return await amethod(request, **purpose_of(stage, purpose))
    if inline:
        return getattr(stage, method)(request)
    return await asyncio.to_thread(getattr(stage, method), request)
