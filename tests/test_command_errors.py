"""Errors credited to the command that failed, root causes tied to a failure only near it,
and commands named apart, on logs in the real shape of Codex 2026 rollouts (``exec_command``
sessions polled with ``write_stdin``) and mini-swe-agent v1/v2 (heredocs, ``sed -i``,
multi-line ``python -c``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import call_message, result_message, say
from test_probe_gold import _probes

from benchmark.activity.actions import extract
from benchmark.activity.steps import step_of
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.recall import CAUSE_WINDOW
from benchmark.run.compaction import CompactionConfig, find_points
from benchmark.transcript.formats import import_file

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "commands"
CODEX = FIXTURES / "rollout-2026-01-20T10-00-00-sessions.jsonl"
MINI = [FIXTURES / "slug_tool_calls.traj.json", FIXTURES / "slug_text_protocol.traj.json"]


def _all_probes(path: Path, window: int, types: list[str]) -> list:
    transcript = import_file(path).transcript
    config = CompactionConfig(context_window=window, tail_tokens=150)
    asked = ProbeConfig(types=types, per_type=20)
    return [
        p for pt in find_points(transcript, config) for p in generate_probes(transcript, pt, asked)
    ]


def test_a_poll_is_linked_to_the_command_that_started_its_session():
    transcript = import_file(CODEX).transcript
    msgs = transcript.messages
    actions = extract(msgs, {i: m.render() for i, m in enumerate(msgs)}, 0, len(msgs))
    polls = [a for a in actions if a.name == "write_stdin"]
    assert [p.ran.command for p in polls] == [
        "cd /w/tinyq && python -m pytest -q tests/test_backoff.py",
        "cd /w/tinyq && python scripts/load.py --workers 4",
        "cd /w/tinyq && TINYQ_URL=redis://localhost:6379 python scripts/load.py --workers 4",
        "cd /w/tinyq && python -m pytest -q tests",
    ]
    assert all(step_of(p) == "no_target" for p in polls)  # a poll is no next step


def test_codex_session_errors_name_the_command_that_failed():
    probes = _all_probes(CODEX, 1200, ["recall"])
    questions = {p.question: [f.text for f in p.gold.facts] for p in probes}
    assert not any("write_stdin" in q for q in questions)
    pytest_run = "`cd /w/tinyq && python -m pytest -q tests/test_backoff.py`"
    assert questions[f"What exact error did {pytest_run} fail with?"] == [
        "tests/test_backoff.py::test_cap",
        "assert 60 == 30",
    ]
    load = "cd /w/tinyq && python scripts/load.py --workers 4"
    assert questions[f"What exact error did `{load}` fail with?"] == ["KeyError: 'TINYQ_URL'"]
    assert questions["Which command failed with a `KeyError`?"] == [load]
    root = f"What did we identify as the root cause of the failure of {pytest_run}?"
    assert questions[root][0].startswith("`backoff()` still caps at a literal 60")
    assert not any("starting 4 workers" in f for fs in questions.values() for f in fs)


def _failure() -> list[dict]:
    out = "Traceback (most recent call last):\nKeyError: 'TINYQ_URL'\nExit code: 1"
    return [
        call_message("f1", "bash", {"command": "python scripts/load.py"}),
        result_message("f1", out),
    ]


def _reads(n: int) -> list[dict]:
    region = []
    for i in range(n):
        region += [
            call_message(f"r{i}", "bash", {"command": f"cat src/m{i}.py"}),
            result_message(f"r{i}", f"x = {i}"),
        ]
    return region


CAUSE = say("The root cause is that the settings loader never reads the .env file.")


@pytest.mark.parametrize(
    ("between", "about"),
    [
        ([], "of the failure of `python scripts/load.py`"),
        (_reads(CAUSE_WINDOW // 2 - 1), "of the failure of `python scripts/load.py`"),
        (_reads(CAUSE_WINDOW), "of the problem we were debugging"),  # too far from it
        ([{"role": "user", "content": "Now update the changelog."}], "of the problem we were"),
    ],
)
def test_a_root_cause_is_a_failures_only_near_it(between, about):
    probes = _probes([*_failure(), *between, CAUSE], "recall")
    roots = [p.question for p in probes if "root cause" in p.question]
    assert len(roots) == 1 and about in roots[0], roots


@pytest.mark.parametrize("path", MINI, ids=lambda p: p.name)
def test_mini_swe_agent_commands_are_named_apart(path):
    probes = _all_probes(path, 900, ["recall"])
    questions = [p.question for p in probes]
    assert not any('python -c "`' in q or "`cd /testbed && python -c" in q for q in questions)
    failed = [q for q in questions if q.startswith("What exact error")]
    assert failed == [
        "What exact error did the `python` script containing "
        "`print(slugify('Hello  World'))` fail with?"
    ]


@pytest.mark.parametrize("path", MINI, ids=lambda p: p.name)
def test_mini_swe_agent_steps_read_as_their_effect(path):
    transcript = import_file(path).transcript
    msgs = transcript.messages
    actions = extract(msgs, {i: m.render() for i, m in enumerate(msgs)}, 0, len(msgs))
    steps = [s if isinstance(s := step_of(a), str) else s.line() for a in actions]
    assert steps == [
        "search def slugify",
        "bash python",
        "bash python",
        "create repro_slug.py",
        "edit src/textkit/slug.py",
        "edit src/textkit/slug.py",
        "bash repro_slug.py",
        "bash tests/test_slug.py",
        "finish",
    ]


SWE = Path(__file__).parent / "fixtures" / "transcripts" / "swe_agent"


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        (
            "slugify_function_calls.traj",
            '{\\"file_name\\": \\"slug.py\\"}',
            '{\\"file_name\\": \\"slug.py\\", \\"dir\\": \\"/repo/src\\"}',
        ),
        ("slugify_text_protocol.traj", "find_file slug.py", "find_file slug.py /repo/src"),
        ("slugify_function_calls.traj", "", ""),
        ("slugify_text_protocol.traj", "", ""),
    ],
)
def test_find_file_reads_the_same_target_in_both_swe_agent_formats(tmp_path, name, old, new):
    """Called or typed, with or without a folder: a search for the file name."""
    text = (SWE / name).read_text()
    if old:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    transcript = import_file(path).transcript
    msgs = transcript.messages
    actions = extract(msgs, {i: m.render() for i, m in enumerate(msgs)}, 0, len(msgs))
    found = [a for a in actions if a.tool == "find_file"]
    assert [step_of(a).line() for a in found] == ["search slug.py"]
