"""A misbehaving judge server: the job finishes; bad judgments are retried, then counted."""

from __future__ import annotations

import json

from conftest import SMALL, compose_config
from test_configs import scripted_llm

from benchmark.config.schema import validate
from benchmark.run.pipeline import run_job


def test_bad_judge_replies_are_counted_not_scored(openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.json_schema = "reject"  # like some local servers

    def reply(body: dict) -> str:
        prompt = json.dumps(body["messages"])
        if "What did we change in" in prompt:
            return scripted_llm(body).replace('"score": 1', '"score": 7')  # out of range
        if "what did we decide" in prompt:
            return "{not json"  # malformed, every time
        return scripted_llm(body)

    openai_stub.reply = reply
    cfg = compose_config([*SMALL, "judge=gpt4o", f"judge.endpoint.base_url={openai_stub.base_url}"])
    result = run_job(validate(cfg))
    metrics = result.metrics()
    failed = [r for r in result.probe_results if r.judgment.failed]
    scored = [r for r in result.probe_results if not r.failed]
    assert failed and scored  # the run finished with both kinds
    assert metrics["probes/failed_judgments"] == len(failed)
    assert all(r.score is None and r.judgment.error for r in failed)
    errors = " ".join(r.judgment.error for r in failed)
    assert "outside 0..5" in errors  # the score of 7
    assert "JSON" in errors or "json" in errors  # the malformed replies
    assert (
        metrics["headline/overall"] == 1.0
    )  # only valid judgments (all scored 1) are in the roll-up
    # Every failed judgment was retried: 1 + max_retries calls each.
    assert metrics["llm/judge/failures"] >= 3 * len(failed)
    formats = {r.body.get("response_format", {}).get("type") for r in openai_stub.requests}
    assert formats == {"json_schema", "json_object"}  # fell back after the rejection
