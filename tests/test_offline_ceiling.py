"""The offline stack measures the policy, not the answerer: the control arm reaches the
ceiling on real logs, an abstention scores nothing, and a dimension the reference judge
cannot tell apart is left out of the offline overall (LLM judges keep all six)."""

from __future__ import annotations

import pytest
from conftest import SMALL, compose_config, swe_agent_job

from benchmark.answerer import ExtractiveAnswerer
from benchmark.config.schema import validate
from benchmark.judge import JudgeRequest, ReferenceJudge
from benchmark.judge.base import Judgment
from benchmark.judge.llm import LLMJudge
from benchmark.judge.measured import not_measured
from benchmark.probe.models import Fact, Gold
from benchmark.rubric import aggregate
from benchmark.run.parts import Parts, build_parts
from benchmark.run.pipeline import run_job
from benchmark.scoring.abstention import is_abstention
from benchmark.scoring.scorecard import render
from benchmark.transcript.models import Message

GOLD = Gold(answer="We edited src/app/db.py.", facts=[Fact(kind="modified", text="src/app/db.py")])
CONTEXT = [Message(role="assistant", content="I edited src/app/db.py to use the pool.")]
CRITERIA = [
    "accuracy_factual",
    "artifact_files_modified",
    "instruction_format",
    "instruction_constraints",
    "completeness_coverage",
]


def scores(answer: str) -> dict[str, float]:
    request = JudgeRequest(
        probe_question="Which files did we modify?",
        model_response=answer,
        compacted_context=CONTEXT,
        ground_truth=GOLD,
        rubric_criteria=CRITERIA,
    )
    return ReferenceJudge().judge(request).scores()


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   \n",
        "Not in context.",
        "NOT IN CONTEXT",
        "I don't know.",
        "Unknown",
        "N/A",
        "The context does not contain the answer.",
        "I cannot answer this question.",
    ],
)
def test_an_abstention_scores_zero_on_every_criterion(answer: str) -> None:
    assert is_abstention(answer)
    assert scores(answer) == dict.fromkeys(CRITERIA, 0)


@pytest.mark.parametrize(
    "answer",
    [
        "NOT IN CONTEXT\nprobably src/app/db.py",
        "src/app/db.py",
        "None of the tests failed.",
        "Unknown option --frobnicate",
        "Not in context: src/app/db.py",
    ],
)
def test_an_answer_that_says_something_is_not_an_abstention(answer: str) -> None:
    assert not is_abstention(answer)
    assert scores(answer)["instruction_format"] == 5


def test_the_reference_judge_declares_instruction_criteria_unmeasured_for_verbatim_answers():
    seed = validate(compose_config(SMALL)).rubric
    judge = ReferenceJudge()
    assert judge.unmeasured_criteria(ExtractiveAnswerer()) == {
        "instruction_format",
        "instruction_constraints",
    }
    assert not_measured(seed, judge, ExtractiveAnswerer()) == ["instruction_following"]
    # Longer answers than the judge allows can fail the format criterion: then it measures.
    assert not_measured(seed, judge, ExtractiveAnswerer(max_answer_tokens=2000)) == []
    assert not_measured(seed, judge, object()) == []  # an LLM answerer declares nothing
    assert not hasattr(LLMJudge, "unmeasured_criteria")  # LLM judges score all six


def test_rubric_without_drops_the_dimension_and_its_criteria():
    seed = validate(compose_config(SMALL)).rubric
    assert seed.dimensions_within({"instruction_format", "instruction_constraints"}) == [
        "instruction_following"
    ]
    assert seed.dimensions_within({"instruction_format"}) == []
    rollup = seed.without(["instruction_following"])
    assert "instruction_following" not in rollup.dimensions
    assert all("instruction_format" not in c for c in rollup.probe_criteria.values())
    assert seed.without([]) is seed
    with pytest.raises(ValueError, match="no dimension 'nope'"):
        seed.without(["nope"])
    judged = {c: 5.0 for c in seed.criteria} | {"accuracy_factual": 1.0}
    full, reduced = aggregate(seed, [judged]), aggregate(rollup, [judged])
    assert set(full.dimensions) - set(reduced.dimensions) == {"instruction_following"}
    assert reduced.overall == pytest.approx(sum(reduced.dimensions.values()) / 5)


class MeasuresEverything:
    """A judge like an LLM judge: it scores every criterion and declares none unmeasured."""

    def __init__(self) -> None:
        self.inner = ReferenceJudge()

    def judge(self, request: JudgeRequest) -> Judgment:
        return self.inner.judge(request)


@pytest.fixture(scope="module")
def offline_and_llm_like():
    config = validate(compose_config(["policy=none", *SMALL]))
    parts = build_parts(config)
    offline = run_job(config)
    llm_like = run_job(
        config, Parts(parts.policy, parts.answerer, MeasuresEverything(), parts.ledger)
    )
    return offline, llm_like


def test_offline_overall_leaves_instruction_following_out(offline_and_llm_like):
    offline, _ = offline_and_llm_like
    assert offline.not_measured == ["instruction_following"]
    metrics = offline.metrics()
    assert not any("instruction_following" in k for k in metrics)
    dims = offline.scores().dimensions
    assert "instruction_following" not in dims
    assert metrics["headline/overall"] == pytest.approx(sum(dims.values()) / len(dims))
    # Still scored and kept per probe: only the roll-up leaves it out.
    assert all("instruction_format" in r.judgment.scores() for r in offline.probe_results)
    for r in offline.probe_results:
        assert r.score == pytest.approx(
            aggregate(offline.rollup_rubric, [r.judgment.scores()]).overall
        )
    text = render(offline)
    assert "n/m" in text and "instruction_following: not measured offline" in text


def test_a_judge_that_measures_everything_keeps_all_six(offline_and_llm_like):
    offline, llm_like = offline_and_llm_like
    assert llm_like.not_measured == []
    metrics = llm_like.metrics()
    assert "rubric/instruction_following" in metrics
    assert len(llm_like.scores().dimensions) == 6
    assert "n/m" not in render(llm_like)
    # Same judgments: only the roll-up differs.
    assert [r.judgment for r in llm_like.probe_results] == [
        r.judgment for r in offline.probe_results
    ]


def test_control_arm_reaches_the_ceiling_on_real_swe_agent_logs(shared_data):
    """The issue's check: with the full context the offline answerer recovers what the
    context holds (README's window for these trajectories)."""
    config = validate(compose_config(["policy=none", *swe_agent_job(shared_data)]))
    result = run_job(config)
    metrics = result.metrics()
    assert result.not_measured == ["instruction_following"]
    assert metrics["headline/overall"] >= 4.0
    assert metrics["type/artifact"] >= 4.0
