"""The protected head of a real agent log is its prelude plus the user's task
(``compaction.head_messages: auto``): Codex's long developer prelude and injected AGENTS.md /
environment messages, Claude Code's injected caveats and system-reminders. A big prelude says
at most one line per file, and no probe asks about it."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from conftest import compose_config
from real_shapes import CLAUDE_TASK, claude_code_prelude, codex_2026

from benchmark.config.schema import validate
from benchmark.probe.candidate import View
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.run.compaction import CompactionConfig, find_points, head_warning, protected_head_end
from benchmark.run.pipeline import run_job
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.prelude import is_injected, prelude_end
from benchmark.transcript.sources import import_file

CODEX_TASK = "Cap the retry delay in src/app.py and document it."
WINDOW = ["compaction.context_window=60000", "compaction.tail_tokens=8000"]


def _codex(tmp_path: Path, filler: int = 200) -> Transcript:
    return import_file(codex_2026(tmp_path / "codex", filler=filler)).transcript


def _config(head: int | str = "auto", window: int = 60_000, tail: int = 8_000):
    return CompactionConfig(context_window=window, tail_tokens=tail, head_messages=head)


def test_the_codex_head_is_the_prelude_and_the_task(tmp_path):
    t = _codex(tmp_path)
    roles = [m.role for m in t.messages[:5]]
    assert roles == ["system", "system", "user", "user", "user"]
    assert prelude_end(t.messages) == 4  # base instructions, permissions, AGENTS.md, env
    points = find_points(t, _config())
    assert len(points) >= 2
    for p in points:
        assert p.head_end == 5 and t.messages[p.head_end - 1].content == CODEX_TASK
    assert head_warning(t, _config()) is None  # big (~22K tokens) but below the trigger


def test_the_claude_code_head_is_the_injected_messages_and_the_task(tmp_path):
    t = import_file(claude_code_prelude(tmp_path / "cc", filler=80)).transcript
    assert [is_injected(m) for m in t.messages[:5]] == [True, True, True, True, False]
    config = _config(window=20_000, tail=3_000)
    points = find_points(t, config)
    assert points and {p.head_end for p in points} == {5}
    assert t.messages[4].content == CLAUDE_TASK


def test_a_message_with_a_harness_block_and_the_users_words_is_the_users():
    mixed = "<system-reminder>\nBe terse.\n</system-reminder>\nPlease fix the failing test."
    assert not is_injected(Message(role="user", content=mixed))
    assert is_injected(Message(role="user", content="<environment_context>x</environment_context>"))
    assert not is_injected(Message(role="assistant", content="# AGENTS.md instructions for /x"))


def test_head_messages_2_splits_as_before(tmp_path):
    t = _codex(tmp_path)
    points = find_points(t, _config(head=2))
    assert points and {p.head_end for p in points} == {2}
    assert protected_head_end(t.messages, _config(head=2)) == 2
    with pytest.raises(ValueError, match="'auto' or a number"):
        CompactionConfig(head_messages="all")


def test_probes_never_come_from_the_prelude(tmp_path):
    """With head_messages=2 the AGENTS.md and environment messages lie in the region: seen
    empty, so no question, gold or evidence comes from them, even a quoted error."""
    t = _codex(tmp_path, filler=30)
    agents = (
        "# AGENTS.md instructions for /work/repo\nIf you see `ValueError: prelude_only_err`, ask."
    )
    messages = list(t.messages)
    messages[2] = messages[2].model_copy(update={"content": agents})
    t = t.model_copy(update={"messages": messages})
    config = _config(head=2, window=12_000, tail=1_000)
    points = find_points(t, config)
    assert points
    probe_config = ProbeConfig()
    for p in points:
        view = View.of(t, p)
        assert view.texts[2] == "" and view.texts[3] == ""
        for probe in generate_probes(t, p, probe_config):
            assert all(e.message_index >= 4 for e in probe.evidence), probe
            text = probe.question + probe.gold.answer
            assert "prelude_only_err" not in text and "AGENTS" not in text


def _job(tmp_path: Path, folder: Path, *overrides: str):
    cfg = compose_config(
        [
            "transcript=files",
            f"transcript.path={folder}",
            "tracking=disabled",
            f"cache.dir={tmp_path / 'cache'}",
            *overrides,
        ]
    )
    return run_job(validate(cfg))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("policy", ["truncate", "hermes"])
def test_a_big_prelude_below_the_trigger_warns_nothing(tmp_path, caplog, policy):
    codex_2026(tmp_path / "logs", filler=400)
    with caplog.at_level(logging.WARNING):
        result = _job(tmp_path, tmp_path / "logs", f"policy={policy}", *WINDOW)
    assert len(result.points) >= 2
    said = _warnings(caplog)
    assert not any("protected head" in w or re.search(r"point \d+:", w) for w in said), said


def test_a_head_that_leaves_no_room_is_one_line_per_file(tmp_path, caplog):
    """Window 22K: the ~22K-token head passes the trigger, so it compacts at every message;
    the job says so once, not at each of its hundreds of points."""
    codex_2026(tmp_path / "logs", filler=100)
    with caplog.at_level(logging.WARNING):
        result = _job(
            tmp_path,
            tmp_path / "logs",
            "policy=truncate",
            "compaction.context_window=22000",
            "compaction.tail_tokens=4000",
        )
    assert len(result.points) > 10
    head = [w for w in _warnings(caplog) if "protected head" in w]
    assert len(head) == 1
    assert "5 message(s)" in head[0] and "compaction.head_messages=auto" in head[0]
