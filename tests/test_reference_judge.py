"""The offline reference judge: each criterion's documented mapping on hand-built gold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmark.judge import JudgeRequest, ReferenceJudge
from benchmark.judge.matching import exact_match, phrase_match
from benchmark.judge.reference import scaled
from benchmark.probe.models import Fact, Gold
from benchmark.rubric.models import Rubric
from benchmark.text.terms import stem
from benchmark.transcript.models import Message

CONF = Path(__file__).resolve().parents[1] / "conf"
SEED_RUBRIC = Rubric.model_validate(
    OmegaConf.to_container(OmegaConf.load(CONF / "rubric/seed.yaml"))
)
SEED_CRITERIA = sorted(SEED_RUBRIC.judged_criteria)  # the rest are scored by rule

CONTEXT = [
    Message(role="user", content="Add a session cache to the app."),
    Message(
        role="assistant",
        content=(
            "Created src/app/cache.py and tests/test_cache.py. Modified src/app/db.py to use "
            "the pool. Read setup.cfg. Pinned httpx==0.27.2. Decided to use Redis because "
            "it supports TTLs; rejected memcached. Still pending: add retry to the uploader."
        ),
    ),
]

GOLD = Gold(
    answer="Created cache.py and its test, modified db.py, pinned httpx 0.27.2, chose Redis.",
    facts=[
        Fact(kind="created", text="src/app/cache.py"),
        Fact(kind="created", text="tests/test_cache.py"),
        Fact(kind="modified", text="src/app/db.py"),
        Fact(kind="read", text="setup.cfg"),
        Fact(kind="identifier", text="0.27.2"),
        Fact(kind="detail", text="use the pool"),
        Fact(kind="pending", text="add retry to the uploader"),
        Fact(kind="choice", text="use Redis"),
        Fact(kind="rationale", text="it supports TTLs"),
        Fact(kind="alternative", text="memcached"),
    ],
)

PERFECT = CONTEXT[1].content or ""


def judge(
    answer: str,
    criteria: list[str] | None = None,
    gold: Gold = GOLD,
    scale_max: int = 5,
    context: list[Message] | None = None,
    **kwargs: object,
) -> dict[str, float]:
    request = JudgeRequest(
        probe_question="What did we do in this part of the session?",
        model_response=answer,
        compacted_context=CONTEXT if context is None else context,
        ground_truth=gold,
        rubric_criteria=criteria or SEED_CRITERIA,
        scale_max=scale_max,
    )
    judgment = ReferenceJudge(**kwargs).judge(request)
    assert not judgment.failed
    assert [r.criterion for r in judgment.results] == request.rubric_criteria
    return judgment.scores()


def test_perfect_answer_scores_full_marks_everywhere() -> None:
    scores = judge(PERFECT)
    assert scores == {c: 5 for c in SEED_CRITERIA}


def test_empty_answer_scores_zero_everywhere() -> None:
    for answer in ("", "  \n "):
        assert judge(answer) == {c: 0 for c in SEED_CRITERIA}


def test_partial_answer_per_criterion() -> None:
    # Matches: created cache.py, modified db.py, 0.27.2, pending task. Misses the rest.
    answer = (
        "We created src/app/cache.py, edited src/app/db.py, pinned 0.27.2; "
        "todo: add retry to the uploader."
    )
    scores = judge(answer)
    assert scores["accuracy_factual"] == scaled(5, 4, 10) == 2
    assert scores["accuracy_technical"] == scaled(5, 3, 5) == 3  # created x2, modified, read, id
    assert scores["context_conversation_state"] == 2
    assert scores["context_artifact_state"] == scaled(5, 2, 4) == 3
    assert scores["artifact_files_created"] == scaled(5, 1, 2) == 3  # halves round up
    assert scores["artifact_files_modified"] == 5
    assert scores["artifact_key_details"] == scaled(5, 1, 2) == 3  # identifier yes, detail no
    assert scores["completeness_coverage"] == scaled(5, 4, 9) == 2  # 4 of 9 kinds
    assert scores["completeness_depth"] == 2
    assert scores["continuity_work_state"] == scaled(5, 2, 3) == 3
    assert scores["continuity_todo_state"] == 5
    assert scores["continuity_reasoning"] == 0
    assert scores["instruction_format"] == 5
    assert scores["instruction_constraints"] == 5


def test_kind_subsets_fall_back_to_all_facts() -> None:
    gold = Gold(answer="pinned 0.27.2", facts=[Fact(kind="identifier", text="0.27.2")])
    scores = judge("pinned 0.27.2", gold=gold)
    assert scores == {c: 5 for c in SEED_CRITERIA}
    assert (
        judge(
            "pinned 0.28.0", gold=gold, context=[*CONTEXT, Message(role="user", content="0.28.0")]
        )["artifact_files_created"]
        == 0
    )


def test_distractor_path_does_not_match() -> None:
    gold = Gold(answer="modified db.py", facts=[Fact(kind="modified", text="src/app/db.py")])
    context = [
        Message(role="user", content="src/app/db_utils.py src/app/db.py.bak /repo/src/app/db.py")
    ]
    crit = ["artifact_files_modified"]
    assert judge("src/app/db_utils.py", crit, gold, context=context) == {crit[0]: 0}
    assert judge("src/app/db.py.bak", crit, gold, context=context) == {crit[0]: 0}
    assert judge("edited /repo/src/app/db.py.", crit, gold, context=context) == {crit[0]: 5}
    assert judge("edited SRC/APP/DB.PY", crit, gold, context=context) == {crit[0]: 0}


def test_exact_and_phrase_matching_rules() -> None:
    assert exact_match("0.27.2", "httpx==0.27.2,")
    assert not exact_match("0.27.2", "0.27.21")
    assert not exact_match("0.27.2", "10.27.2")
    assert exact_match("src/a/db.py", "see /repo/src/a/db.py:12")
    assert not exact_match("src/a/db.py", "xsrc/a/db.py")
    assert exact_match("pytest tests/test_cache.py -q", "ran `pytest tests/test_cache.py -q` twice")
    assert phrase_match("Use `Redis`  for the cache", "we will use redis for the cache.")
    # 80% of content terms: "supports", "ttls" -> both present after stemming.
    assert phrase_match("it supports TTLs", "TTL support decided it")
    assert not phrase_match("add retry to the uploader", "the uploader is done")
    assert stem("created") == stem("create") and stem("files") == stem("file")
    assert stem("pinned") == stem("pin") and stem("modified") == stem("modify")


def test_fabricated_identifiers_are_penalised() -> None:
    crit = ["accuracy_factual", "instruction_constraints", "completeness_depth"]
    honest = judge(PERFECT, crit)
    assert honest == {c: 5 for c in crit}
    one = judge(PERFECT + " Also bumped to 0.28.0.", crit)
    assert one == {"accuracy_factual": 4, "instruction_constraints": 4, "completeness_depth": 5}
    many = judge("See src/x1.py src/x2.py src/x3.py src/x4.py src/x5.py src/x6.py", crit)
    assert many == {"accuracy_factual": 0, "instruction_constraints": 0, "completeness_depth": 0}
    # Identifiers from the question or the gold are not fabricated.
    gold_only = Gold(answer="v", facts=[Fact(kind="identifier", text="9.9.9")])
    assert judge("it was 9.9.9", crit, gold_only)["instruction_constraints"] == 5


def test_instruction_format_scales_down_past_the_limit() -> None:
    crit = ["instruction_format"]
    assert judge("short answer", crit, max_answer_tokens=10) == {crit[0]: 5}
    long_answer = " ".join(["cache"] * 40)  # 40 tokens
    assert judge(long_answer, crit, max_answer_tokens=10) == {crit[0]: scaled(5, 10, 40)}


def test_recall_2_1_0_scale() -> None:
    rubric = Rubric.model_validate(
        OmegaConf.to_container(OmegaConf.load(CONF / "rubric/recall_2_1_0.yaml"))
    )
    crit = list(rubric.criteria)
    assert crit == ["recall_correctness"]
    assert judge(PERFECT, crit, scale_max=2) == {crit[0]: 2}
    assert judge("", crit, scale_max=2) == {crit[0]: 0}
    assert judge("src/app/cache.py", crit, scale_max=2) == {crit[0]: 1}  # 1/10 -> partial
    assert judge(PERFECT.replace("memcached", "x"), crit, scale_max=2) == {crit[0]: 1}  # 9/10
    assert judge("src/app/cache.py", crit, scale_max=5) == {crit[0]: 1}
    assert judge(PERFECT.replace("memcached", "x"), crit, scale_max=5) == {crit[0]: 4}


def test_reasoning_names_matched_and_missed_facts() -> None:
    request = JudgeRequest(
        probe_question="Which files did we create?",
        model_response="src/app/cache.py",
        compacted_context=CONTEXT,
        ground_truth=GOLD,
        rubric_criteria=["artifact_files_created"],
    )
    (result,) = ReferenceJudge().judge(request).results
    assert "1/2" in result.reasoning
    assert "src/app/cache.py" in result.reasoning and "tests/test_cache.py" in result.reasoning
    assert result.reasoning.index("src/app/cache.py") < result.reasoning.index("missed")


def test_unknown_criterion_raises_naming_it() -> None:
    with pytest.raises(ValueError, match="made_up_criterion"):
        judge(PERFECT, ["accuracy_factual", "made_up_criterion"])
    assert set(SEED_CRITERIA) | {"recall_correctness"} <= ReferenceJudge.CRITERIA


def test_deterministic_and_blind() -> None:
    first = judge(PERFECT[:120])
    assert all(judge(PERFECT[:120]) == first for _ in range(3))
    # The request type carries no policy identity the judge could use.
    assert set(JudgeRequest.model_fields) == {
        "probe_question",
        "model_response",
        "compacted_context",
        "ground_truth",
        "rubric_criteria",
        "scale_max",
    }


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"max_answer_tokens": 0}, "max_answer_tokens"), ({"term_ratio": 1.5}, "term_ratio")],
)
def test_invalid_parameters_are_named(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ReferenceJudge(**kwargs)


def test_yaml_configs_instantiate() -> None:
    for group, cls_name in (
        ("judge/reference.yaml", "ReferenceJudge"),
        ("answerer/extractive.yaml", "ExtractiveAnswerer"),
    ):
        cfg = OmegaConf.to_container(OmegaConf.load(CONF / group))
        assert isinstance(cfg.pop("name"), str)
        assert type(instantiate(cfg)).__name__ == cls_name
    judge_obj = instantiate(
        {k: v for k, v in OmegaConf.load(CONF / "judge/reference.yaml").items() if k != "name"}
    )
    assert judge_obj.max_answer_tokens == 1000
