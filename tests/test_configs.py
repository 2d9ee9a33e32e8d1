"""Every option of every config group composes, validates and runs; bad values fail in one line."""

from __future__ import annotations

import json

import pytest
from conftest import SMALL, compose_config, group_options

from benchmark.__main__ import run
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.run.parts import build_parts
from benchmark.run.pipeline import run_job
from benchmark.stub import scripted_reply

GROUPS = ["transcript", "policy", "summarizer", "probe", "answerer", "judge", "rubric", "tracking"]
CASES = [(g, o) for g in GROUPS for o in group_options(g)]


@pytest.fixture(scope="module")
def transcript_file(tmp_path_factory):
    from benchmark.transcript.synthetic import generate

    t = generate(seed=3, target_tokens=30000)
    path = tmp_path_factory.mktemp("transcripts") / "session.json"
    path.write_text(json.dumps({"messages": [m.model_dump(exclude_none=True) for m in t.messages]}))
    return path


def test_every_group_has_options():
    for group in GROUPS:
        assert group_options(group), f"conf/{group}/ is empty"


# The stand-in model lives in the package now; the old name stays for other tests.
scripted_llm = scripted_reply


def endpoint_key(group: str, option: str) -> str | None:
    """Where an option's LLM endpoint sits in the config, if it has one."""
    node = compose_config([f"{group}={option}"])[group]
    if "endpoint" in node:
        return f"{group}.endpoint"
    if node.get("writer") and "endpoint" in node.writer:
        return f"{group}.writer.endpoint"
    return None


def uses_llm(group: str, option: str) -> bool:
    return endpoint_key(group, option) is not None


@pytest.mark.parametrize(("group", "option"), CASES, ids=[f"{g}={o}" for g, o in CASES])
def test_option_composes_and_runs(group, option, transcript_file, tmp_path, request, monkeypatch):
    overrides = [*SMALL, f"{group}={option}"]
    if uses_llm(group, option):
        # LLM endpoints run against a scripted OpenAI-compatible server on loopback.
        stub = request.getfixturevalue("openai_stub")
        stub.reply = scripted_llm
        for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            monkeypatch.setenv(var, "sk-test")
        overrides += [f"{endpoint_key(group, option)}.base_url={stub.base_url}"]
        overrides += ["probe.per_type=2"] if group != "probe" else []
    if group == "summarizer" and option != "offline":
        overrides.append("policy=regenerative")  # a policy that calls the summarizer
    if (group, option) == ("policy", "opaque"):  # only an LLM answerer can read its item
        overrides += ["answerer=gpt4o", f"answerer.endpoint.base_url={stub.base_url}"]
    if (group, option) == ("judge", "gpt4o_2_1_0"):
        overrides.append("rubric=recall_2_1_0")  # the verdict judge scores only correctness
    if (group, option) == ("transcript", "files"):
        overrides = [o for o in overrides if not o.startswith("transcript.")]
        overrides.append(f"transcript.path={transcript_file}")
    if group == "tracking":
        overrides.append(f"tracking.store_dir={tmp_path / 'mlruns'}")
    cfg = compose_config(overrides)
    config = validate(cfg)
    if (group, option) == ("tracking", "server"):
        assert config.tracking.uri  # runs against a live server in tests/test_sweeps.py
        return
    if group == "tracking":
        overall = run(cfg)  # the whole job, including tracking when enabled
        assert overall is not None and 0 <= overall <= config.rubric.scale_max
        assert (tmp_path / "mlruns" / "mlflow.db").exists() == config.tracking.enabled
        return
    result = run_job(config)
    if uses_llm(group, option):
        role = {"probe": "probe_writer", "policy": "summarizer"}.get(group, group)
        assert result.metrics()[f"llm/{role}/calls"] > 0
    scores = result.scores()
    assert scores.n > 0 and scores.overall is not None
    assert 0 <= scores.overall <= config.rubric.scale_max
    assert set(scores.dimensions) <= set(config.rubric.dimensions)
    assert {r.probe.type for r in result.probe_results} <= set(config.probe.types)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "rubric.dimensions.accuracy.accuracy_factual=-1",
            "config key 'rubric.dimensions': weight of 'accuracy.accuracy_factual' must be >= 0",
        ),
        ("probe.types=[]", "config key 'probe.types'"),
        ("probe.types=[recall,gossip]", "config key 'probe.types.1'"),
        ("compaction.trigger_ratio=1.5", "config key 'compaction.trigger_ratio'"),
        ("transcript.sessions=0", "config key 'transcript.sessions'"),
        ("+probe.colour=red", "config key 'probe.colour': unknown key"),
        ("policy.name=''", "config key 'policy.name'"),
        # a part's options are typed per target and checked before any part is built
        ("+answerer.max_answer_tokns=1", "unknown option 'max_answer_tokns' (did you mean"),
        ("judge.term_ratio=abc", "config key 'judge.term_ratio'"),
        ("+summarizer.max_region_tokens=1", "config key 'summarizer.max_region_tokens'"),
        ("+policy.ledger=1", "config key 'policy.ledger'"),
    ],
)
def test_bad_values_name_the_key(override, expected):
    with pytest.raises(UserError) as err:
        validate(compose_config([*SMALL, override]))
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_transcript_path_names_the_key():
    with pytest.raises(UserError, match="transcript.path"):
        validate(compose_config(["transcript=files", "tracking=disabled"]))


def test_bad_policy_kwarg_names_the_policy():
    # Refused by the policy's typed settings (its bounds), before the job builds it.
    with pytest.raises(UserError, match="'policy.recent_tokens': must be >= 0"):
        validate(compose_config([*SMALL, "policy=truncate", "policy.recent_tokens=-5"]))


class Recorder:
    """A policy of one's own: its ``needs`` asks for the job's ledger and nothing else."""

    needs = ("ledger",)

    def __init__(self, ledger: object = None, cache: object = "untouched") -> None:
        self.ledger, self.cache = ledger, cache

    def compact(self, segments):
        return segments.messages


def test_a_part_gets_exactly_the_shared_objects_it_declares():
    cfg = compose_config([*SMALL, "policy=none", f"policy._target_={__name__}.Recorder"])
    parts = build_parts(validate(cfg))
    assert parts.policy.ledger is parts.ledger
    assert parts.policy.cache == "untouched"  # offered to the job's parts, not declared here


def test_unimportable_target_is_a_user_error():
    cfg = compose_config([*SMALL, "policy._target_=nowhere.Policy"])
    with pytest.raises(UserError, match="policy .*nowhere.Policy"):
        validate(cfg)  # refused with the config, before any part is built


def test_rubric_without_criteria_for_a_probe_type():
    cfg = compose_config([*SMALL, "~rubric.probe_criteria.decision"])
    with pytest.raises(UserError, match="rubric.probe_criteria.decision"):
        run_job(validate(cfg))


def test_probe_types_from_the_command_line():
    cfg = compose_config([*SMALL, "policy=truncate", "probe.types=[recall,artifact]"])
    result = run_job(validate(cfg))
    assert result.policy == "truncate"
    assert {r.probe.type for r in result.probe_results} == {"recall", "artifact"}
    metrics = result.metrics()
    assert "type/recall" in metrics and "type/decision" not in metrics
