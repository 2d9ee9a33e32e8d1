"""Next-action probes after they exist: scored by rule on every judge (never sent to one),
answered in the one-line format by the LLM answerer (checked and retried like other
structured replies), and their agreement with the uncompacted context's answer."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from conftest import compose_config, stub_endpoint
from omegaconf import OmegaConf
from openai_stub import OpenAIStub
from test_next_guess import SESSION

from benchmark.activity.next_step import NextStep
from benchmark.answerer import Answer, AnswerRequest, ExtractiveAnswerer, LLMAnswerer
from benchmark.answerer.prompts import NEXT_ACTION_TASK
from benchmark.audit.expected import CRITERIA as AUDITED
from benchmark.config.rules import check_judge_criteria, check_verdict_rubric
from benchmark.config.schema import validate
from benchmark.judge import LLMJudge, ReferenceJudge
from benchmark.judge.base import Judgment
from benchmark.judge.prompts import CRITERIA as DESCRIBED
from benchmark.probe.models import Evidence, Fact, Gold, Probe
from benchmark.rubric import Rubric
from benchmark.run.compaction import CompactionPoint
from benchmark.run.evaluation import evaluate
from benchmark.run.results import JobResult, PointResult, ProbeResult
from benchmark.run.scheduling import merged
from benchmark.scoring import metric_names as names
from benchmark.scoring.scorecard import render

CONF = Path(__file__).resolve().parents[1] / "conf"
KEY_ENV = "BENCH_TEST_NEXT_ACTION_KEY"


def rubric(name: str) -> Rubric:
    return Rubric.model_validate(
        OmegaConf.to_container(OmegaConf.load(CONF / f"rubric/{name}.yaml"))
    )


SEED, VERDICT = rubric("seed"), rubric("recall_2_1_0")


RERUN = NextStep(verb="bash", target="tests/test_calc.py")  # the log's step after SESSION


def probe(step: NextStep = RERUN, point: int = 0) -> Probe:
    """A next_action probe as the extraction makes it: its evidence after the region."""
    return Probe(
        id=f"s/p{point}/next_action/0",
        type="next_action",
        question="Which action do you take next? One line: verb target (e.g. open docs/x.md).",
        gold=Gold(
            answer=f"`{step.verb}` `{step.target}`",
            facts=[Fact(kind="identifier", text=step.target)],
            action=step,
        ),
        evidence=[Evidence(message_index=8, quote="pytest tests/test_calc.py")],
        transcript_id="s",
        point=point,
        position=1.0,
    )


# --- the rubric: criteria scored by rule need no judge -------------------------------------------


def test_judge_free_criteria_are_the_next_action_ones() -> None:
    assert SEED.judge_free_criteria == {"continuity_next_action"}
    assert SEED.criteria["continuity_next_action"] == "continuity"
    assert VERDICT.judge_free_criteria == frozenset()  # recall_correctness is judged too
    assert "continuity_next_action" not in DESCRIBED  # no judge describes it...
    assert set(SEED.judged_criteria) <= AUDITED  # ...nor does the audit expect anything of it
    assert set(SEED.judged_criteria) <= ReferenceJudge.CRITERIA


@pytest.mark.parametrize(
    ("overrides", "mode"),
    [([], None), ([], "rubric"), (["judge=gpt4o_2_1_0", "rubric=recall_2_1_0"], "2_1_0")],
)
def test_the_judge_checks_pass_with_next_action_probes(
    overrides: list[str], mode: str | None, openai_stub: OpenAIStub, monkeypatch
) -> None:
    """The rubric's judge-free criterion trips neither the judge nor the verdict check."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    config = validate(compose_config(["probe.types=[next_action]", *overrides]), parts=False)
    check_verdict_rubric(config)
    if mode is None:
        check_judge_criteria(config, ReferenceJudge())
    else:
        judge = LLMJudge(endpoint=stub_endpoint(openai_stub, KEY_ENV), mode=mode)
        try:
            check_judge_criteria(config, judge)
        finally:
            judge.close()


# --- scoring by rule, on every judge -------------------------------------------------------------


def test_scored_by_rule_and_never_sent_to_a_judge(openai_stub: OpenAIStub, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    llm_judge = LLMJudge(endpoint=stub_endpoint(openai_stub, KEY_ENV))
    try:
        for judge in (ReferenceJudge(), llm_judge):
            result = evaluate(probe(), SESSION, ExtractiveAnswerer(), judge, SEED)
            assert result.answer.text == "bash tests/test_calc.py"
            assert result.judgment.scores() == {"continuity_next_action": 5.0}
            assert result.score == 5.0
    finally:
        llm_judge.close()
    assert openai_stub.requests == []  # the LLM judge was never asked


# (gold step, points): 5/3/1/0 for the offline answer "bash tests/test_calc.py".
GOLDS = [
    (NextStep(verb="bash", target="/testbed/tests/test_calc.py"), 5),
    (NextStep(verb="open", target="tests/test_calc.py"), 3),
    (NextStep(verb="bash", target="git diff"), 1),
    (NextStep(verb="edit", target="src/calc.py"), 0),
]


@pytest.mark.parametrize(("gold", "points"), GOLDS)
@pytest.mark.parametrize("rubric_", [SEED, VERDICT], ids=["seed", "2_1_0"])
def test_points_are_scaled_to_the_rubric(gold: NextStep, points: int, rubric_: Rubric) -> None:
    result = evaluate(probe(gold), SESSION, ExtractiveAnswerer(), ReferenceJudge(), rubric_)
    criteria = rubric_.probe_criteria["next_action"]
    expected = points * rubric_.scale_max / 5
    assert result.judgment.scores() == dict.fromkeys(criteria, expected)
    assert result.score == pytest.approx(expected)
    assert f"{points}/5" in result.judgment.results[0].reasoning


# --- the LLM answerer's one-line reply -----------------------------------------------------------


@pytest.fixture
def llm_answerer(openai_stub, monkeypatch, stage_on_stub):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    base = stub_endpoint(openai_stub, KEY_ENV, max_retries=2, backoff_initial_s=0.01)
    return functools.partial(stage_on_stub, LLMAnswerer, base)


def ask(answerer: LLMAnswerer, context=SESSION) -> Answer:
    return answerer.answer(
        AnswerRequest(question=probe().question, context=context, form="next_action")
    )


def test_the_llm_answerer_is_asked_for_one_line(openai_stub, llm_answerer) -> None:
    openai_stub.reply = lambda _: "bash pytest tests/test_calc.py\n"
    assert ask(llm_answerer()) == Answer(text="bash pytest tests/test_calc.py")
    system = openai_stub.requests[0].body["messages"][0]["content"]
    assert NEXT_ACTION_TASK in system and "`verb target`" in system


def test_a_malformed_reply_is_asked_again(openai_stub, llm_answerer) -> None:
    replies = iter(["I think the next step is to run the tests.", "bash pytest tests/test_calc.py"])
    openai_stub.reply = lambda _: next(replies)
    answer = ask(llm_answerer())
    assert answer.text == "bash pytest tests/test_calc.py" and not answer.failed
    assert len(openai_stub.requests) == 2
    repair = openai_stub.requests[1].body["messages"][-1]["content"]
    assert "verb target" in repair  # the check's reason goes back to the model


def test_a_reply_never_in_format_is_a_wrong_answer_not_a_failure(openai_stub, llm_answerer) -> None:
    openai_stub.reply = lambda _: "Probably running the tests again."
    answerer = llm_answerer()
    result = evaluate(probe(), SESSION, answerer, ReferenceJudge(), SEED)
    assert len(openai_stub.requests) == 3  # the first try and max_retries=2
    assert not result.failed and result.answer.text == "Probably running the tests again."
    assert result.score == 0.0


# --- agreement with the uncompacted context's answer ---------------------------------------------

COMPACTED = SESSION[:6]  # the edit was dropped: the guess is now "edit calc.py"


def test_the_control_answer_is_given_inside_the_probe() -> None:
    kept = evaluate(
        probe(), SESSION, ExtractiveAnswerer(), ReferenceJudge(), SEED, uncompacted=SESSION
    )
    assert kept.control_agreement == 5.0
    lost = evaluate(
        probe(), COMPACTED, ExtractiveAnswerer(), ReferenceJudge(), SEED, uncompacted=SESSION
    )
    assert lost.answer.text == "edit /testbed/src/calc.py" and lost.score == 0.0
    assert lost.control_agreement == 0.0
    plain = evaluate(probe(), SESSION, ExtractiveAnswerer(), ReferenceJudge(), SEED)
    assert plain.control_agreement is None  # no uncompacted context given: none


def test_the_control_arm_answer_is_used_when_there_is_one() -> None:
    answerer, judge = ExtractiveAnswerer(), ReferenceJudge()
    own = evaluate(probe(), COMPACTED, answerer, judge, SEED)
    control = evaluate(probe(), SESSION, answerer, judge, SEED)
    both = merged(own, control, SEED.scale_max)
    assert both.control is control and both.control_agreement == 0.0
    same = merged(own, evaluate(probe(), COMPACTED, answerer, judge, SEED), SEED.scale_max)
    assert same.control_agreement == 5.0  # both arms guess the same step
    failed = control.model_copy(update={"answer": Answer(failed=True, error="down")})
    assert merged(own, failed, SEED.scale_max).control_agreement is None
    assert merged(own, None, SEED.scale_max) is own


def job(agreements: list[float | None]) -> JobResult:
    points = []
    for k, agreement in enumerate(agreements):
        result = ProbeResult(
            probe=probe(point=k),
            answer=Answer(text="bash tests/test_calc.py"),
            judgment=Judgment.model_validate(
                {"results": [{"criterion": "continuity_next_action", "score": 5.0}]}
            ),
            score=5.0,
            control_agreement=agreement,
        )
        point = CompactionPoint(
            transcript_id="s", ordinal=k, head_end=1, tail_start=2, end=8, tokens_before=100
        )
        points.append(PointResult(point=point, tokens_after=50, context=[], probes=[result]))
    return JobResult(policy="truncate", transcripts=["s"], rubric=SEED, points=points)


def test_control_agreement_is_logged_with_its_interval_and_shown() -> None:
    result = job([5.0, 0.0, 5.0, None])
    metrics = result.metrics()
    name = names.type_control_agreement("next_action")
    assert name == "type/next_action/control_agreement"
    assert metrics[name] == pytest.approx(10 / 3)
    low, high = names.ci_names(name)
    assert 0 <= metrics[low] <= metrics[name] <= metrics[high] <= 5
    assert metrics[names.type_overall("next_action")] == 5.0
    assert names.layout_problems(metrics) == []
    card = render(result)
    assert "type/next_action/control_agreement 3.33" in card and "next_action 5.00" in card


def test_no_agreement_metric_without_agreements() -> None:
    assert names.type_control_agreement("next_action") not in job([None]).metrics()


def test_on_the_llm_loop_the_control_answer_is_one_more_call(openai_stub, llm_answerer) -> None:
    """The uncompacted context holds the edit: its answer reruns the tests, the compacted
    context's answer edits the file; the second call is the control's."""

    def reply(body: dict) -> str:
        edited = "has been edited" in json.dumps(body)
        return "bash pytest tests/test_calc.py" if edited else "edit src/calc.py"

    openai_stub.reply = reply
    answerer = llm_answerer()
    result = evaluate(probe(), COMPACTED, answerer, ReferenceJudge(), SEED, uncompacted=SESSION)
    assert len(openai_stub.requests) == 2
    assert result.answer.text == "edit src/calc.py" and result.score == 0.0
    assert result.control_agreement == 0.0
