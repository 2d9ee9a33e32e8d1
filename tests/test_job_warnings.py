"""What a job says about a window that does not suit the logs: a head that alone passes the
trigger, a session that compacts but gives no probe, and a policy whose output does not fit
the window (a recorded failure, in the metrics and the scorecard)."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from conftest import compose_config
from rich.console import Console

from benchmark.config.schema import validate
from benchmark.run.pipeline import run_job
from benchmark.scoring import scorecard

SLUGIFY = (
    Path(__file__).parent / "fixtures" / "transcripts" / "swe_agent" / "slugify_function_calls.traj"
)


def _job(path: Path | str, *overrides: str, tmp_path: Path):
    cfg = compose_config(
        [
            "transcript=files",
            f"transcript.path={path}",
            "tracking=disabled",
            f"cache.dir={tmp_path / 'cache'}",
            *overrides,
        ]
    )
    return run_job(validate(cfg))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize(("policy", "over"), [("none", True), ("truncate", False)])
def test_policy_output_over_the_window_is_a_recorded_failure(policy, over, tmp_path):
    result = _job(
        SLUGIFY,
        f"policy={policy}",
        "compaction.context_window=300",
        "compaction.tail_tokens=60",
        tmp_path=tmp_path,
    )
    points = result.points
    assert len(points) >= 2
    assert [p.over_window for p in points] == [p.tokens_after > 300 for p in points]
    counted = sum(p.over_window for p in points)
    assert result.metrics()["points/over_window"] == counted
    assert (counted > 0) is over
    text = scorecard.render(result, Console(width=400, file=io.StringIO()))
    note = f"policy failure: {counted} of {len(points)} points: policy output over the 300-token"
    assert (note in text) is over
    assert ("policy failure" in text) is over


def test_a_head_that_alone_passes_the_trigger_is_named_once(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="benchmark.run.pipeline"):
        _job(
            SLUGIFY,
            "policy=truncate",
            "compaction.context_window=150",
            "compaction.tail_tokens=30",
            tmp_path=tmp_path,
        )
    head = [w for w in _warnings(caplog) if "protected head alone" in w]
    assert len(head) == 1  # once per file, not per point
    (line,) = head
    assert line.startswith(f"{SLUGIFY}: ")
    assert "2 message(s), 136 tokens" in line and "trigger (120 tokens" in line
    assert "compaction.context_window" in line and "compaction.head_messages" in line


def test_no_head_warning_when_the_head_fits(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="benchmark.run.pipeline"):
        _job(
            SLUGIFY, "compaction.context_window=300", "compaction.tail_tokens=60", tmp_path=tmp_path
        )
    assert not [w for w in _warnings(caplog) if "protected head" in w]


def test_a_session_that_compacts_but_gives_no_probe_is_named(tmp_path, caplog):
    """Small talk compacts like any session, but holds nothing to ask about."""
    chat = [{"role": "system", "content": "You are a helpful assistant."}]
    for n in range(12):
        chat.append({"role": "user", "content": f"Thanks, that helps a lot, round {n}."})
        chat.append({"role": "assistant", "content": "Glad to hear it, happy to help any time."})
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "small_talk.json").write_text(json.dumps(chat))
    (folder / "slugify.traj").write_bytes(SLUGIFY.read_bytes())
    with caplog.at_level(logging.WARNING, logger="benchmark.run.pipeline"):
        result = _job(
            folder, "compaction.context_window=300", "compaction.tail_tokens=60", tmp_path=tmp_path
        )
    assert {r.probe.transcript_id for r in result.probe_results} == {"slugify"}
    quiet = [w for w in _warnings(caplog) if "but no probe" in w]
    assert len(quiet) == 1
    (line,) = quiet
    small_talk = sum(p.point.transcript_id == "small_talk" for p in result.points)
    assert small_talk >= 1
    assert line.startswith(f"{folder / 'small_talk.json'}: {small_talk} compaction point(s) ")
    assert "(nothing extractable: the largest region holds" in line and "0 tool call(s)" in line
