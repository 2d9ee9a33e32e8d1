"""One probe, answered from its context and judged blind; many probes at once on the LLM loop.

A failed answer or judgment is recorded on the probe's result and counted,
never scored as 0. Offline stages run inline (nothing to overlap); stages with
``a<method>`` coroutines run concurrently (``benchmark.scheduling.ProbeScheduler``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from benchmark.answerer.base import Answer, Answerer, AnswerRequest
from benchmark.judge.base import Judge, JudgeRequest, Judgment
from benchmark.llm.connect import purpose_of
from benchmark.llm.loop import run
from benchmark.llm.usage import CallPurpose
from benchmark.probe.models import Probe
from benchmark.results import ProbeResult
from benchmark.rubric import Rubric, aggregate
from benchmark.transcript.models import Message


def evaluate(
    probe: Probe,
    context: list[Message],
    answerer: Answerer,
    judge: Judge,
    rubric: Rubric,
    rollup: Rubric | None = None,
) -> ProbeResult:
    """Answer from the compacted context alone, then judge blind; failures are recorded.

    The judge scores every criterion of ``rubric``; the probe's score rolls up over
    ``rollup`` (default ``rubric``), which leaves out dimensions the judge cannot measure.
    """
    coro = aevaluate(probe, context, answerer, judge, rubric, inline=True, rollup=rollup)
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
) -> ProbeResult:
    """:func:`evaluate` as a coroutine (see :func:`stage_call` for ``inline``); ``purpose``
    (the probe, its point and arm) goes with the LLM stages' calls to their trace."""
    # Built from models validated already: validating again ran every context message's
    # validator twice per probe on the LLM loop (model_construct skips that, nothing else).
    asked = AnswerRequest.model_construct(question=probe.question, context=context)
    try:
        answer = await stage_call(answerer, "answer", asked, inline, purpose)
    except Exception as exc:  # a failed answer is counted, never scored as 0
        answer = Answer(failed=True, error=f"{type(exc).__name__}: {exc}")
    if answer.failed:
        judgment = Judgment(failed=True, error="no answer to judge")
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
    return ProbeResult(probe=probe, answer=answer, judgment=judgment, score=score)


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
