"""Next-action probes: the log's next step after a point as gold, on every format the
importers read, with a reason for every point that gets none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, SMALL, call_message, compose_config, result_message, say

from benchmark.activity.next_step import NextStep
from benchmark.activity.steps import SKIP_REASONS
from benchmark.config.schema import validate
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.models import Probe
from benchmark.probe.next_action import EXAMPLE, next_action
from benchmark.probe.repeats import FirstAsked
from benchmark.run.compaction import CompactionConfig, CompactionPoint, find_points
from benchmark.run.pipeline import run_job
from benchmark.scoring.survival import ContextFacts
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.synthetic import generate

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
PATCH = (
    "*** Begin Patch\n*** Update File: tinyq/retry.py\n@@ def backoff(attempt):\n"
    "-    return 2 ** attempt\n+    return min(60, 2 ** attempt)\n*** End Patch"
)
DIFF = (
    "git apply <<'EOF'\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@ def main():\n"
    "-    run()\n+    run(fast=True)\nEOF"
)
LOOK = [call_message("c0", "bash", {"command": "ls"}), result_message("c0", "src tests")]


def _fenced(body: str) -> dict:
    return say(f"Next I will do this.\n```\n{body}\n```")


def _call(name: str, args: dict) -> list[dict]:
    return [call_message("c1", name, args), result_message("c1", "done")]


# (case, messages after the region, the step or the skip reason)
CASES = [
    # SWE-agent, text protocol: a command block, the observation as the next user message
    (
        "swe-text edit",
        [
            {"role": "user", "content": "[File: /repo/src/app.py]\n(Open file: /repo/src/app.py)"},
            _fenced("edit 120:135\n    return x\nend_of_edit"),
            {"role": "user", "content": "File updated."},
        ],
        NextStep(verb="edit", target="/repo/src/app.py", region="lines 120-135"),
    ),
    ("swe-text open", [_fenced("open src/app.py")], NextStep(verb="open", target="src/app.py")),
    (
        "swe-text insert",
        [
            {"role": "user", "content": "(Open file: /repo/a.py)"},
            _fenced("insert 40\nx = 1\nend_of_insert"),
        ],
        NextStep(verb="edit", target="/repo/a.py", region="line 40"),
    ),
    (
        "swe-text test",
        [_fenced("python -m pytest tests/test_app.py::test_x -q")],
        NextStep(verb="bash", target="tests/test_app.py::test_x"),
    ),
    ("swe-text submit", [_fenced("submit")], "finish"),
    # SWE-agent, function calling
    (
        "swe-fc view",
        _call("str_replace_editor", {"command": "view", "path": "/testbed/src/a.py"}),
        NextStep(verb="open", target="/testbed/src/a.py"),
    ),
    (
        "swe-fc str_replace",
        _call(
            "str_replace_editor",
            {"command": "str_replace", "path": "/testbed/a.py", "old_str": "def load(self):\n"},
        ),
        NextStep(verb="edit", target="/testbed/a.py", region="load"),
    ),
    (
        "swe-fc create",
        _call("str_replace_editor", {"command": "create", "path": "repro.py", "file_text": "1"}),
        NextStep(verb="create", target="repro.py"),
    ),
    (
        "swe-fc insert",
        _call(
            "str_replace_editor",
            {"command": "insert", "path": "/testbed/a.py", "insert_line": 12, "new_str": "x"},
        ),
        NextStep(verb="edit", target="/testbed/a.py", region="line 12"),
    ),
    (
        "swe-fc bash",
        _call("bash", {"command": "python reproduce.py"}),
        NextStep(verb="bash", target="reproduce.py"),
    ),
    ("swe-fc submit", _call("submit", {}), "finish"),
    # Searches read the pattern looked for, never the folder, in every format
    (
        "swe-fc find_file",
        _call("find_file", {"file_name": "slug.py", "dir": "/testbed/src"}),
        NextStep(verb="search", target="slug.py"),
    ),
    (
        "swe-text find_file",
        [_fenced('find_file "slug.py" /testbed/src')],
        NextStep(verb="search", target="slug.py"),
    ),
    (
        "swe-fc search_dir",
        _call("search_dir", {"search_term": "def slugify", "dir": "/testbed"}),
        NextStep(verb="search", target="def slugify"),
    ),
    (
        "swe-text search_dir",
        [_fenced('search_dir "def slugify" /testbed')],
        NextStep(verb="search", target="def slugify"),
    ),
    (
        "swe-text search_file",
        [_fenced('search_file "slugify" src/slug.py')],
        NextStep(verb="search", target="slugify"),
    ),
    (
        "mini grep",
        _call("bash", {"command": "cd /testbed && grep -rn 'def slugify' src | head"}),
        NextStep(verb="search", target="def slugify"),
    ),
    (
        "mini find",
        [_fenced("cd /testbed && find . -name slug.py")],
        NextStep(verb="search", target="slug.py"),
    ),
    # mini-swe-agent: a heredoc, sed -i and an inline script writing a file are edits
    (
        "mini heredoc",
        [_fenced("cd /testbed && cat <<'EOF' > repro.py\nimport slug\nEOF\npython repro.py")],
        NextStep(verb="create", target="repro.py"),
    ),
    (
        "mini sed -i",
        _call("bash", {"command": "cd /testbed && sed -i 's/x/y/' src/slug.py"}),
        NextStep(verb="edit", target="src/slug.py"),
    ),
    (
        "mini python writes",
        [
            _fenced(
                "cd /testbed && python - <<'EOF'\nimport pathlib\np = pathlib.Path('src/slug.py')\n"
                "s = p.read_text()\nopen('src/slug.py', 'w').write(s)\nEOF"
            )
        ],
        NextStep(verb="edit", target="src/slug.py"),
    ),
    (
        "mini submit",
        [_fenced("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A")],
        "finish",
    ),
    # Claude Code
    (
        "claude Read",
        _call("Read", {"file_path": "/home/dev/src/store.py"}),
        NextStep(verb="open", target="/home/dev/src/store.py"),
    ),
    (
        "claude Edit",
        _call(
            "Edit", {"file_path": "src/store.py", "old_string": "class Store:", "new_string": ""}
        ),
        NextStep(verb="edit", target="src/store.py", region="Store"),
    ),
    (
        "claude Write",
        _call("Write", {"file_path": "tests/test_r.py", "content": "x"}),
        NextStep(verb="create", target="tests/test_r.py"),
    ),
    (
        "claude Bash",
        _call("Bash", {"command": "pytest tests/test_store.py -q"}),
        NextStep(verb="bash", target="tests/test_store.py"),
    ),
    ("claude TodoWrite", _call("TodoWrite", {"todos": [{"content": "x"}]}), "no_target"),
    # Codex
    (
        "codex exec_command",
        _call("exec_command", {"cmd": "git diff --stat"}),
        NextStep(verb="bash", target="git diff"),
    ),
    (
        "codex shell argv",
        _call("shell", {"command": ["bash", "-lc", "pytest -q tests/test_retry.py"]}),
        NextStep(verb="bash", target="tests/test_retry.py"),
    ),
    (
        "codex apply_patch",
        _call("apply_patch", {"input": PATCH}),
        NextStep(verb="edit", target="tinyq/retry.py", region="backoff"),
    ),
    (
        "codex apply_patch argv",
        _call("shell", {"command": ["apply_patch", PATCH]}),
        NextStep(verb="edit", target="tinyq/retry.py", region="backoff"),
    ),
    # OpenAI chat with tool calls
    (
        "chat read_file",
        _call("read_file", {"path": "./src/a.py"}),
        NextStep(verb="open", target="./src/a.py"),
    ),
    (
        "chat git apply",
        _call("run_shell", {"command": DIFF}),
        NextStep(verb="edit", target="src/a.py", region="main"),
    ),
    ("chat finish", _call("finish", {"message": "done"}), "finish"),
    ("chat prose only", [say("All done, nothing left.")], "no_action"),
]


def _session(tmp_path: Path, after: list[dict]) -> tuple[Transcript, CompactionPoint]:
    """A chat log (imported) whose point ends right before ``after``."""
    before = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the bug in the app."},
        *LOOK,
    ]
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"messages": before + after}))
    transcript = import_file(path).transcript
    end = len(transcript.messages) - len(after)
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=1, tail_start=3, end=end, tokens_before=1
    )
    return transcript, point


@pytest.mark.parametrize(("case", "after", "expected"), CASES, ids=[c[0] for c in CASES])
def test_the_step_after_the_point_on_every_format(tmp_path, case, after, expected):
    transcript, point = _session(tmp_path, after)
    found = next_action(transcript, point)
    if isinstance(expected, str):
        assert found == expected
        return
    assert isinstance(found, Probe)
    assert found.gold.action == expected
    _assert_well_formed(found, transcript, point)


def _assert_well_formed(probe: Probe, transcript: Transcript, point: CompactionPoint) -> None:
    step = probe.gold.action
    assert step is not None
    assert probe.id == f"{transcript.id}/p{point.ordinal}/next_action/0"
    assert probe.type == "next_action" and probe.position == 1.0
    assert probe.gold.answer.startswith(f"`{step.verb}` `{step.target}`")
    (evidence,) = probe.evidence
    assert evidence.message_index >= point.end  # past the region: the step taken next
    text = transcript.messages[evidence.message_index].render()
    assert evidence.quote in text
    assert [f.kind for f in probe.gold.facts] == ["identifier"]
    assert EXAMPLE in probe.question
    # nothing of the step leaks into the question
    assert step.target not in probe.question
    assert probe.gold.facts[0].text not in probe.question


def test_the_question_offers_every_verb_and_the_sessions_own_tools(tmp_path):
    after = [
        *_call("Read", {"file_path": "a.py"}),
        *_call("custom_tool", {"path": "b.py"}),
        *_call("Bash", {"command": "make test"}),
    ]
    transcript, point = _session(tmp_path, after)
    probe = next_action(transcript, point)
    assert isinstance(probe, Probe)  # only `ls` came before: `open` is offered all the same
    assert "Verbs: bash, open, edit, create, search, delete, custom_tool." in probe.question
    later = next_action(transcript, point.model_copy(update={"end": point.end + 2}))
    assert isinstance(later, Probe)
    assert later.gold.action == NextStep(verb="custom_tool", target="b.py")
    assert later.question == probe.question  # the list says nothing of the step


def _offered(question: str) -> list[str]:
    return question.split("Verbs: ", 1)[1].split(".", 1)[0].split(", ")


def _all_logs() -> list[Path]:
    shared = sorted(SHARED_DATA.glob("swe-agent/*.traj")) if SHARED_DATA.is_dir() else []
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file()) + shared


@pytest.mark.parametrize("path", _all_logs(), ids=lambda p: p.name)
def test_the_gold_verb_is_always_offered(path):
    """Over every next-action probe of every fixture and real log, at small windows."""
    transcript = import_file(path).transcript
    asked = ProbeConfig(types=["next_action"])
    for window in (1500, 4000):
        config = CompactionConfig(context_window=window, tail_tokens=200)
        for point in find_points(transcript, config):
            for probe in generate_probes(transcript, point, asked):
                assert probe.gold.action is not None
                assert probe.gold.action.verb in _offered(probe.question), probe.id


def test_extracted_only_when_asked(tmp_path):
    transcript, point = _session(tmp_path, _call("Read", {"file_path": "a.py"}))
    default = generate_probes(transcript, point, ProbeConfig())
    assert all(p.type != "next_action" for p in default)
    asked = generate_probes(transcript, point, ProbeConfig(types=["next_action"]))
    assert [p.type for p in asked] == ["next_action"]


def test_a_next_action_probe_is_never_a_repeat(tmp_path):
    transcript, point = _session(tmp_path, _call("Read", {"file_path": "a.py"}))
    probe = next_action(transcript, point)
    assert isinstance(probe, Probe)
    again = probe.model_copy(update={"point": 1, "id": probe.id.replace("/p0/", "/p1/")})
    first = FirstAsked()
    assert first([probe]) + first([again]) == [probe, again]
    assert first.repeated == 0


@pytest.mark.parametrize(
    ("fixture", "end", "expected"),
    [
        (
            "claude_code/session.jsonl",
            12,
            NextStep(verb="edit", target="/home/dev/inventory/src/inventory/store.py"),
        ),
        (
            "codex/rollout-2025-10-14T09-12-03-tinyq.jsonl",
            18,
            NextStep(verb="edit", target="tinyq/retry.py", region="RetryPolicy"),
        ),
        (
            "codex/rollout-2025-10-14T09-12-03-tinyq.jsonl",
            12,
            NextStep(verb="bash", target="scripts/backoff_table.py"),
        ),
    ],
)
def test_imported_fixtures(fixture, end, expected):
    transcript = import_file(FIXTURES / fixture).transcript
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=2, head_end=1, tail_start=3, end=end, tokens_before=1
    )
    probe = next_action(transcript, point)
    assert isinstance(probe, Probe)
    assert probe.gold.action == expected
    _assert_well_formed(probe, transcript, point)


def test_swe_agent_traj_text_protocol(tmp_path):
    """An imported ``.traj`` (history with text actions): the edit targets the open file."""
    history = [
        {"role": "system", "content": "You are an autonomous programmer."},
        {"role": "user", "content": "Fix the colon.\n(Open file: n/a)"},
        {"role": "assistant", "content": "Open it.", "action": "open tests/missing_colon.py"},
        {"role": "user", "content": "4:def division(a, b)\n(Open file: /r/tests/missing_colon.py)"},
        {"role": "assistant", "content": "Add it.", "action": "edit 4:4\ndef f():\nend_of_edit"},
        {"role": "user", "content": "File updated.\n(Open file: /r/tests/missing_colon.py)"},
        {"role": "assistant", "content": "Done.", "action": "submit"},
        {"role": "user", "content": "Submitted."},
    ]
    path = tmp_path / "x.traj"
    path.write_text(json.dumps({"history": history, "trajectory": []}))
    transcript = import_file(path).transcript
    edit = next(i for i, m in enumerate(transcript.messages) if "edit 4:4" in m.render())
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=1, tail_start=2, end=edit, tokens_before=1
    )
    probe = next_action(transcript, point)
    assert isinstance(probe, Probe)
    assert probe.gold.action == NextStep(
        verb="edit", target="/r/tests/missing_colon.py", region="line 4"
    )
    assert probe.gold.answer == "`edit` `/r/tests/missing_colon.py` (line 4)"
    assert next_action(transcript, point.model_copy(update={"end": edit + 1})) == "finish"


def test_a_generated_sessions_planted_step_is_the_gold():
    transcript = generate(11, 60_000, "synthetic-11")
    planted = sorted(
        (f for f in transcript.ground_truth if f.kind == "action"),
        key=lambda f: f.message_index,  # stable: calls of one message stay in order
    )
    assert planted
    points = find_points(transcript, CompactionConfig(context_window=8_000, tail_tokens=1_000))
    assert len(points) >= 3
    probes = 0
    for point in points:
        found = next_action(transcript, point)
        first = next((f for f in planted if f.message_index >= point.end), None)
        if isinstance(found, str):
            assert found in SKIP_REASONS
            assert found != "no_action" or first is None
            continue
        probes += 1
        assert first is not None
        assert found.gold.action == NextStep(
            verb=first.key, target=first.value, region=first.details["region"]
        )
        calls = transcript.messages[first.message_index].tool_calls or []
        assert first.details["tool"] in [c.function.name for c in calls]
    assert probes >= len(points) // 2


def test_real_swe_agent_logs_give_a_probe_per_file_that_compacts():
    paths = sorted(SHARED_DATA.glob("swe-agent/*.traj")) if SHARED_DATA.is_dir() else []
    if not paths:
        pytest.skip("../shared/data/swe-agent is not present beside the repository")
    config = CompactionConfig(context_window=1500, tail_tokens=200)  # the README's window
    config_probes = ProbeConfig(types=["next_action"])
    for path in paths:
        transcript = import_file(path).transcript
        points = find_points(transcript, config)
        if not points:
            continue
        probes = [p for pt in points for p in generate_probes(transcript, pt, config_probes)]
        assert probes, path.name
        assert all(p.type == "next_action" and p.gold.action for p in probes)


@pytest.mark.parametrize("policy", ["truncate", "observation_mask"])
def test_on_real_logs_no_compaction_carries_on_at_least_as_well(tmp_path, policy):
    """The issue's check: ``policy=none`` scores next actions at least as high as a
    lossy policy on the SWE-agent logs at the README's window, scored by rule."""
    if not SHARED_DATA.joinpath("swe-agent").is_dir():
        pytest.skip("../shared/data/swe-agent is not present beside the repository")
    scores = {}
    for name in ("none", policy):
        config = compose_config(
            [
                "transcript=files",
                f"transcript.path={SHARED_DATA / 'swe-agent'}",
                "compaction.context_window=1500",
                "compaction.tail_tokens=200",
                "probe.types=[next_action]",
                f"policy={name}",
                f"cache.dir={tmp_path}",
            ]
        )
        metrics = run_job(validate(config)).metrics()
        assert metrics["probes/total"] > 0 and metrics["probes/failed"] == 0
        scores[name] = metrics["headline/overall"]
    assert scores["none"] >= scores[policy], scores


def test_a_job_counts_the_points_skipped(tmp_path):
    """Every point either has its probe or says why not; the run logs how many skipped."""
    overrides = [
        *SMALL,
        "probe.types=[next_action]",
        f"cache.dir={tmp_path}",
    ]
    result = run_job(validate(compose_config(overrides)))
    asked = {r.probe.point for r in result.probe_results}
    for point in result.points:
        has_probe = point.point.ordinal in asked
        assert has_probe != (point.next_action_skipped in SKIP_REASONS)
    metrics = result.metrics()
    skipped = sum(p.next_action_skipped is not None for p in result.points)
    assert metrics["points/next_action_skipped"] == skipped
    assert asked and metrics["probes/total"] == len(asked)
    default = run_job(validate(compose_config([*SMALL, f"cache.dir={tmp_path}"])))
    assert "points/next_action_skipped" not in default.metrics()
    assert all(p.next_action_skipped is None for p in default.points)


def test_survival_is_whether_the_context_still_names_the_target(tmp_path):
    transcript, point = _session(tmp_path, _call("Read", {"file_path": "src/store.py"}))
    probe = next_action(transcript, point)
    assert isinstance(probe, Probe)
    before = transcript.messages[: point.end]
    named = [*before, Message(role="user", content="Read src/store.py")]
    assert ContextFacts(named).survival(probe) == 1.0
    assert ContextFacts(before).survival(probe) == 0.0
    # Measured against the session up to the point: a target it names survives or not...
    assert ContextFacts(named, uncompacted=named).survival(probe) == 1.0
    assert ContextFacts(named[:1], uncompacted=named).survival(probe) == 0.0
    # ...and one it never names before the point (the step is new) is not measured.
    assert ContextFacts(before, uncompacted=before).survival(probe) is None
