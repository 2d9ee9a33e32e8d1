"""Rules between config groups (benchmark.config.rules), on real Hydra composition: a broken
rule is one line naming both options, before any part is built; the endpoint group and the
Hermes aliases compose as documented."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
import yaml
from conftest import CONF, REPO, SMALL, compose_config, group_options

from benchmark.config.rules import VERDICT_MODE_CRITERIA
from benchmark.config.schema import resolve, validate
from benchmark.errors import UserError
from benchmark.judge.llm import VERDICT_CRITERION
from benchmark.run.parts import build_parts

ENDPOINT_FIELDS = {"model", "base_url", "api_key_env", "price_input_per_1m", "max_concurrency"}


def _validate(*overrides: str):
    return validate(compose_config([*SMALL, *overrides]))


def _judge(*overrides: str) -> dict:
    """The judge section, validated (endpoints included) and as plain data."""
    cfg = compose_config([*SMALL, *overrides])
    validate(cfg)
    return resolve(cfg)["judge"]


# -- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("answerer", ["extractive", "local"])
def test_opaque_needs_an_llm_answerer_on_its_provider(answerer):
    with pytest.raises(UserError, match=rf"policy 'opaque'.*answerer '{answerer}'"):
        _validate("policy=opaque", f"answerer={answerer}")


def test_opaque_with_an_answerer_on_its_provider_validates():
    assert _validate("policy=opaque", "answerer=gpt4o").answerer.name == "gpt4o"
    moved = [f"policy.endpoint.base_url={u}" for u in ("http://gw:1/v1",)]
    with pytest.raises(UserError, match="http://gw:1/v1"):  # same provider means same base_url
        _validate("policy=opaque", "answerer=gpt4o", *moved)
    _validate(
        "policy=opaque", "answerer=gpt4o", *moved, "answerer.endpoint.base_url=http://gw:1/v1/"
    )


def test_verdict_judge_needs_the_verdict_rubric():
    with pytest.raises(UserError, match=r"judge 'gpt4o_2_1_0'.*rubric 'seed'.*rubric=recall_2_1_0"):
        _validate("judge=gpt4o_2_1_0")
    assert _validate("judge=gpt4o_2_1_0", "rubric=recall_2_1_0").rubric.name == "recall_2_1_0"


def test_verdict_rule_reaches_panel_members_and_unquoted_modes():
    with pytest.raises(UserError, match=r"judge 'panel.gpt4o'.*rubric 'seed'"):
        _validate("judge=panel", "judge.members.gpt4o.mode=2_1_0")  # Hydra reads it as 210


def test_verdict_criterion_is_the_judges():
    assert {VERDICT_CRITERION} == VERDICT_MODE_CRITERIA


def test_rubric_covers_every_probe_type():
    with pytest.raises(UserError, match=r"rubric 'seed' has no criteria for probe type 'artifact'"):
        _validate("~rubric.probe_criteria.artifact")
    _validate("~rubric.probe_criteria.artifact", "probe.types=[recall,decision]")


def test_llm_summarizer_with_a_policy_that_does_not_summarize_warns(monkeypatch, caplog):
    """Warned, not refused: a sweep over policies keeps one summarizer for every arm."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with caplog.at_level(logging.WARNING, logger="benchmark.config.rules"):
        build_parts(_validate("policy=truncate", "summarizer=gpt4o"))
        build_parts(_validate("policy=hermes", "summarizer=gpt4o"))
        build_parts(_validate("policy=truncate"))
    warned = [r.getMessage() for r in caplog.records if r.name == "benchmark.config.rules"]
    assert warned == ["summarizer 'gpt4o' is never called: policy 'truncate' does not summarize"]


def test_a_broken_rule_exits_2_with_one_line_before_any_work(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchmark", "judge=gpt4o_2_1_0", f"hydra.run.dir={tmp_path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},  # no key: the rule comes first
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "judge 'gpt4o_2_1_0'" in lines[0] and "rubric 'seed'" in lines[0]


# -- conf/endpoint/ -------------------------------------------------------------------------


def _endpoint_blocks(node, key=""):
    """Every ``endpoint`` mapping in a YAML tree, with its key."""
    if isinstance(node, dict):
        for name, value in node.items():
            sub = f"{key}.{name}" if key else str(name)
            if name == "endpoint" and isinstance(value, dict):
                yield sub, value
            else:
                yield from _endpoint_blocks(value, sub)


def test_endpoint_fields_live_only_in_the_endpoint_group():
    for path in sorted(CONF.rglob("*.yaml")):
        if path.parent.name == "endpoint" or "hydra" in path.parts:
            continue
        for key, block in _endpoint_blocks(yaml.safe_load(path.read_text()) or {}):
            given = {k for k, v in block.items() if v is not None}  # a panel overlay: all null
            assert not ENDPOINT_FIELDS & given, f"{path.relative_to(CONF)}: {key}"


def test_every_endpoint_option_is_a_whole_endpoint():
    for option in group_options("endpoint"):
        endpoint = _judge("judge=gpt4o", f"endpoint@judge.endpoint={option}")["endpoint"]
        assert endpoint["name"] == option
    assert {"gpt4o", "gpt4o_mini", "gpt41", "claude", "local"} <= set(group_options("endpoint"))


def test_a_role_switches_endpoint_and_keeps_its_own_settings():
    judge = _judge("judge=gpt4o", "endpoint@judge.endpoint=claude")["endpoint"]
    assert (judge["model"], judge["max_tokens"]) == ("claude-sonnet-4-20250514", 2048)
    assert judge["api_key_env"] == "ANTHROPIC_API_KEY" and judge["structured_output"] == "none"
    field = _judge("judge=gpt4o", "judge.endpoint.model=gpt-4o-2024-11-20")["endpoint"]
    assert field["model"] == "gpt-4o-2024-11-20"
    panel = _judge("judge=panel", "endpoint@judge.members.gpt41.endpoint=gpt4o_mini")
    assert panel["members"]["gpt41"]["endpoint"]["model"] == "gpt-4o-mini"


# Per role option: (model, max_tokens, timeout_s, structured_output) as composed before the
# endpoint group existed (the role's own settings over the endpoint's).
ROLES = {
    "answerer=gpt4o": ("gpt-4o", 1024, 120, "json_schema"),
    "answerer=local": ("Qwen/Qwen2.5-7B-Instruct", 512, 300, "json_schema"),
    "judge=gpt4o_mini": ("gpt-4o-mini", 2048, 120, "json_schema"),
    "judge=claude": ("claude-sonnet-4-20250514", 2048, 120, "none"),
    "judge=gpt4o_2_1_0": ("gpt-4o", 512, 120, "json_schema"),
    "judge=local": ("Qwen/Qwen2.5-7B-Instruct", 1024, 300, "json_schema"),
    "summarizer=gpt41": ("gpt-4.1", 8192, 120, "none"),
    "summarizer=local": ("Qwen/Qwen2.5-7B-Instruct", 1536, 300, "none"),
    "probe=llm_gpt4o": ("gpt-4o", 8192, 300, "json_schema"),
    "probe=llm_local": ("Qwen/Qwen2.5-7B-Instruct", 1536, 600, "json_schema"),
    "policy=opaque": ("gpt-5.2", 1024, 300, "json_schema"),
}


@pytest.mark.parametrize("option", sorted(ROLES))
def test_role_endpoint_composes_as_before(option, monkeypatch):
    for var in ("LOCAL_LLM_MODEL", "LOCAL_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    group = option.split("=")[0]
    data = resolve(compose_config([option]))[group]
    endpoint = data["writer"]["endpoint"] if group == "probe" else data["endpoint"]
    got = (
        endpoint["model"],
        endpoint.get("max_tokens", 1024),
        endpoint["timeout_s"],
        endpoint["structured_output"],
    )
    assert got == ROLES[option]


# -- the Hermes names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "name"), [("aggressive", "hermes_aggressive"), ("floor10k", "hermes_floor10k")]
)
def test_hermes_aliases_compose_to_the_new_names(alias, name):
    assert resolve(compose_config([f"policy={alias}"])) == resolve(
        compose_config([f"policy={name}"])
    )
    assert resolve(compose_config([f"policy={alias}"]))["policy"]["name"] == name
