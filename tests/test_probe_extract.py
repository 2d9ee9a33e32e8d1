"""Probe extraction: verbatim gold and evidence, region scoping, state at the point,
selection, determinism, and real SWE-agent trajectories."""

from __future__ import annotations

import functools
import json
import re
import time
from pathlib import Path

import pytest
from conftest import call_message, split_session
from conftest import result_message as _result
from conftest import say as _say
from pydantic import ValidationError

from benchmark.activity.spelling import spelled, spellings, whole_escapes
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.models import Probe
from benchmark.run.compaction import CompactionConfig, CompactionPoint, find_points
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import Message, Transcript

SENTINELS = ("HEADSENTINEL", "TAILSENTINEL", "FUTURESENTINEL", "head_sentinel", "tail_sentinel")


def _call(name: str, args: dict, call_id: str, content: str | None = None) -> dict:
    return call_message(call_id, name, args, content)


HEAD = [
    {"role": "system", "content": "You are a coding agent. HEADSENTINEL rules apply."},
    {
        "role": "user",
        "content": (
            "Fix the stale cache bug. HEADSENTINEL: earlier we saw\n"
            "FAILED tests/test_head.py::test_head_sentinel - ValueError: HEADSENTINEL\n"
            "Decision: use HEADSENTINEL storage rather than disk because HEADSENTINEL is faster.\n"
            "- [ ] HEADSENTINEL task\nI pinned head_sentinel to 9.9.9."
        ),
    },
]

REGION = [
    _say(
        "Plan:\n- [ ] Reproduce the stale cache bug\n- [ ] Fix TTL handling in "
        "`src/app/cache.py`\n- [ ] Add a regression test for TTL expiry\n"
        "- [ ] Update the changelog"
    ),
    _call("Read", {"file_path": "src/app/cache.py"}, "c1"),
    _result("c1", "class Cache:\n    def get(self, key):\n        return self._data[key]\n"),
    _call("bash", {"command": "pytest tests/test_cache.py -q"}, "c2"),
    _result(
        "c2",
        (
            "..F.F\n"
            "E       AssertionError: assert 'stale' == 'fresh'\n"
            "FAILED tests/test_cache.py::test_ttl_expiry - "
            "AssertionError: assert 'stale' == 'fresh'\n"
            "FAILED tests/test_cache.py::test_concurrent_get - TimeoutError: lock not released\n"
            "2 failed, 3 passed in 0.12s"
        ),
    ),
    _say(
        "The root cause is that `get()` never compares the stored timestamp with the TTL. "
        "Decision: compare timestamps with time.monotonic() rather than time.time() because "
        "wall-clock jumps would expire entries early."
    ),
    _call(
        "str_replace_based_edit_tool",
        {
            "command": "str_replace",
            "path": "src/app/cache.py",
            "old_str": "        return self._data[key]",
            "new_str": "        if self._is_expired(key):\n            return None\n"
            "        return self._data[key]",
        },
        "c3",
    ),
    _result("c3", "The file src/app/cache.py has been edited."),
    _call(
        "Write",
        {
            "file_path": "tests/test_ttl.py",
            "content": "def test_ttl_expires_entries():\n    assert expire_after(1)\n",
        },
        "c4",
    ),
    _result("c4", "File created successfully at: tests/test_ttl.py"),
    _call("bash", {"command": "python -c 'import redis'"}, "c5"),
    _result(
        "c5",
        'Traceback (most recent call last):\n  File "<string>", line 1\n'
        "ModuleNotFoundError: No module named 'redis'",
    ),
    _call(
        "edit_file",
        {"path": "requirements.txt", "old_str": "httpx", "new_str": "httpx==0.27.0\nredis==5.0.1"},
        "c6",
    ),
    _result("c6", "Edited requirements.txt"),
    _call(
        "apply_patch",
        {
            "input": (
                "*** Begin Patch\n*** Add File: src/app/metrics.py\n+def record_cache_hit(key):\n"
                "+    HITS[key] += 1\n*** Update File: src/app/config.py\n-TTL_SECONDS = 30\n"
                "+TTL_SECONDS = 60\n*** End Patch"
            )
        },
        "c7",
    ),
    _result("c7", "Done!"),
    _call(
        "shell",
        {
            "command": "cat > docs/cache.md << 'EOF'\n# Cache\nEntries expire.\nEOF\n"
            "sed -i 's/30s/60s/' README.md"
        },
        "c8",
    ),
    _result("c8", ""),
    _call("str_replace_editor", {"command": "view", "path": "setup.cfg"}, "c9"),
    _result("c9", "[metadata]\nname = app\n"),
    _call("bash", {"command": "cat pyproject.toml"}, "c10"),
    _result("c10", '[project]\nname = "app"\n'),
    _say("We'll use an LRU eviction policy instead of FIFO, as hot keys must survive bursts."),
    _say(
        "- [x] Reproduce the stale cache bug\n- [x] Fix TTL handling in `src/app/cache.py`\n"
        "- [ ] Add a regression test for TTL expiry\n- [ ] Update the changelog"
    ),
    _call("bash", {"command": "pytest tests/ -q"}, "c11"),
    _result(
        "c11",
        (
            "FAILED tests/test_ttl.py::test_ttl_expires_entries - NameError: name 'expire_after' "
            "is not defined\nFAILED tests/test_cache.py::test_concurrent_get - TimeoutError: lock "
            "not released\n2 failed, 4 passed in 0.30s"
        ),
    ),
    _say("I set `max_entries` to 512 so the cache fits in the worker's memory budget."),
]

TAIL = [
    _call("Write", {"file_path": "src/tail_sentinel.py", "content": "TAILSENTINEL = 1\n"}, "t1"),
    _result("t1", "ok"),
    _call("bash", {"command": "pytest tests/test_ttl.py -q"}, "t2"),
    _result("t2", "1 passed in 0.05s"),
    _say(
        "- [x] Add a regression test for TTL expiry\n- [ ] Update the changelog\n"
        "- [ ] TAILSENTINEL follow-up\nDecision: use TAILSENTINEL rather than x because y z."
    ),
    _call("bash", {"command": "python tail_sentinel.py"}, "t3"),
    _result("t3", "RuntimeError: TAILSENTINEL exploded"),
]

FUTURE = [
    _say("- [x] Update the changelog\nFUTURESENTINEL"),
    _call("bash", {"command": "pytest tests/test_cache.py -q"}, "f1"),
    _result("f1", "5 passed in 0.1s"),
]


def _transcript(messages: list[dict], tid: str = "fixture") -> Transcript:
    return Transcript(id=tid, source="test", messages=[Message.model_validate(m) for m in messages])


@pytest.fixture(scope="module")
def session() -> tuple[Transcript, CompactionPoint]:
    messages = HEAD + REGION + TAIL + FUTURE
    transcript = _transcript(messages)
    return transcript, split_session(transcript, len(HEAD), len(REGION), len(TAIL))


@pytest.fixture(scope="module")
def probes(session) -> list[Probe]:
    return generate_probes(*session, ProbeConfig(per_type=20))


def _of(probes: list[Probe], ptype: str) -> list[Probe]:
    return [p for p in probes if p.type == ptype]


def _facts(probes: list[Probe], *kinds: str) -> set[str]:
    return {f.text for p in probes for f in p.gold.facts if not kinds or f.kind in kinds}


def _check_invariants(transcript: Transcript, point: CompactionPoint, probes: list[Probe]) -> None:
    questions = [p.question for p in probes]
    assert len(questions) == len(set(questions)), "duplicate questions"
    for p in probes:
        assert p.id.startswith(f"{transcript.id}/p{point.ordinal}/{p.type}/")
        assert p.transcript_id == transcript.id and p.point == point.ordinal
        assert 0.0 <= p.position <= 1.0
        rendered = {}
        for ev in p.evidence:
            assert point.head_end <= ev.message_index < point.tail_start
            rendered[ev.message_index] = transcript.messages[ev.message_index].render()
            assert ev.quote in rendered[ev.message_index]
        for fact in p.gold.facts:
            assert len(fact.text) <= 200
            # As the log means it: verbatim, or JSON-escaped in a rendered call.
            assert any(spelled(fact.text, text) for text in rendered.values()), fact
            assert fact.text.lower() not in p.question.lower(), (fact, p.question)


def test_invariants_hold(session, probes):
    _check_invariants(*session, probes)
    assert {p.type for p in probes} == {"recall", "artifact", "continuation", "decision"}


def test_head_tail_and_future_never_leak(probes):
    blob = json.dumps([p.model_dump() for p in probes])
    for sentinel in SENTINELS:
        assert sentinel not in blob


def test_recall_errors_pins_and_values(probes):
    recall = _of(probes, "recall")
    by_question = {p.question: p for p in recall}
    error = by_question["What exact error did `pytest tests/test_cache.py -q` fail with?"]
    assert "AssertionError: assert 'stale' == 'fresh'" in _facts([error])
    assert "tests/test_cache.py::test_ttl_expiry" in _facts([error], "identifier")
    module = by_question["Which command failed with a `ModuleNotFoundError`?"]
    assert _facts([module]) == {"python -c 'import redis'"}
    assert _facts([by_question["Which version of `httpx` did we pin?"]]) == {"0.27.0"}
    assert _facts([by_question["Which version of `redis` did we pin?"]]) == {"5.0.1"}
    assert _facts([by_question["What value did we set `max_entries` to?"]]) == {"512"}
    root = next(p for p in recall if "root cause" in p.question)
    assert any("never compares the stored timestamp" in f for f in _facts([root]))


def test_artifact_trail(probes):
    artifact = _of(probes, "artifact")
    assert _facts(artifact, "created") == {
        "tests/test_ttl.py",
        "src/app/metrics.py",
        "docs/cache.md",
    }
    assert _facts(artifact, "modified") == {
        "src/app/cache.py",
        "requirements.txt",
        "src/app/config.py",
        "README.md",
    }
    assert _facts(artifact, "read") == {"setup.cfg", "pyproject.toml"}
    by_question = {p.question: p for p in artifact}
    change = by_question["What did we change in `src/app/cache.py`?"]
    assert "self._is_expired" in _facts([change])
    new_file = by_question["What did we put in the new file `src/app/metrics.py`?"]
    assert "record_cache_hit" in _facts([new_file])


def test_continuation_state_at_the_point(probes):
    continuation = _of(probes, "continuation")
    pending = _facts(continuation, "pending")
    assert "Update the changelog" in pending  # checked off only after point.end
    assert "Add a regression test for TTL expiry" not in pending  # checked off in the tail
    assert "Reproduce the stale cache bug" not in pending  # checked off in the region
    assert "tests/test_cache.py::test_concurrent_get" in pending
    assert "tests/test_ttl.py::test_ttl_expires_entries" not in pending  # fixed in the tail
    assert "tests/test_cache.py::test_ttl_expiry" not in pending  # fixed by the later full run
    done = next(p for p in continuation if "completed" in p.question)
    assert "Reproduce the stale cache bug" in _facts([done])


def test_decisions(probes):
    decisions = _of(probes, "decision")
    facts = _facts(decisions)
    assert {f.kind for p in decisions for f in p.gold.facts} <= {
        "choice",
        "rationale",
        "alternative",
    }
    assert "wall-clock jumps would expire entries early" in facts
    assert "hot keys must survive bursts" in facts
    assert len(decisions) == 2


def test_deterministic(session):
    transcript, point = session
    again = _transcript([m.model_dump(exclude_none=True) for m in transcript.messages])
    first = generate_probes(transcript, point, ProbeConfig(seed=3, per_type=2))
    assert first == generate_probes(again, point, ProbeConfig(seed=3, per_type=2))


def test_only_configured_types(session):
    probes = generate_probes(*session, ProbeConfig(types=["decision", "recall"]))
    assert {p.type for p in probes} == {"decision", "recall"}


def test_nothing_to_ask_yields_no_probes():
    messages = HEAD + [_say("Hello."), {"role": "user", "content": "Thanks."}, _say("Bye.")]
    transcript = _transcript(messages)
    point = CompactionPoint(
        transcript_id="fixture", ordinal=0, head_end=2, tail_start=4, end=5, tokens_before=0
    )
    assert generate_probes(transcript, point, ProbeConfig()) == []


def _spread_session(n: int) -> tuple[Transcript, CompactionPoint]:
    region = []
    for i in range(n):
        region += [
            _call("bash", {"command": f"python step_{i:02d}.py"}, f"s{i}"),
            _result(f"s{i}", f"ValueError: bad value {i * 7} in step {i}"),
        ]
    transcript = _transcript(HEAD + region + [_say("done")])
    point = CompactionPoint(
        transcript_id="fixture",
        ordinal=1,
        head_end=2,
        tail_start=2 + len(region),
        end=3 + len(region),
        tokens_before=0,
    )
    return transcript, point


def test_per_type_cap_and_stratification():
    transcript, point = _spread_session(30)
    for seed in range(5):
        probes = generate_probes(
            transcript, point, ProbeConfig(types=["recall"], per_type=3, seed=seed)
        )
        assert len(probes) == 3
        assert [p.id for p in probes] == [f"fixture/p1/recall/{n}" for n in range(3)]
        positions = sorted(p.position for p in probes)
        assert positions[0] < 1 / 3 <= positions[1] < 2 / 3 <= positions[2]
    picks = {
        tuple(
            p.question
            for p in generate_probes(
                transcript, point, ProbeConfig(types=["recall"], per_type=3, seed=seed)
            )
        )
        for seed in range(5)
    }
    assert len(picks) > 1  # the seed drives the pick within each stratum


def test_config_validation_names_the_field():
    with pytest.raises(ValidationError, match="types"):
        ProbeConfig(types=[])
    with pytest.raises(ValidationError, match="types"):
        ProbeConfig(types=["recall", "recall"])
    with pytest.raises(ValidationError, match="per_type"):
        ProbeConfig(per_type=0)
    with pytest.raises(ValidationError, match="nope"):
        ProbeConfig(nope=1)


def test_fast_on_a_long_session():
    block = REGION * 120  # ~3,000 messages, over a megabyte of text
    messages = HEAD + block + [_say("end")]
    for i, m in enumerate(messages):  # unique call ids per repetition
        if m.get("tool_calls"):
            m = {**m, "tool_calls": [{**m["tool_calls"][0], "id": f"x{i}"}]}
            messages[i] = m
            if messages[i + 1]["role"] == "tool":
                messages[i + 1] = {**messages[i + 1], "tool_call_id": f"x{i}"}
    transcript = _transcript(messages)
    assert sum(len(m.render()) for m in transcript.messages) > 1_000_000 // 4
    point = CompactionPoint(
        transcript_id="fixture",
        ordinal=0,
        head_end=2,
        tail_start=len(messages) - 1,
        end=len(messages),
        tokens_before=0,
    )
    start = time.perf_counter()
    probes = generate_probes(transcript, point, ProbeConfig())
    assert time.perf_counter() - start < 2.0
    _check_invariants(transcript, point, probes)


# --- real SWE-agent trajectories ------------------------------------------------------------

TRAJECTORIES = (
    "pydicom__pydicom-1458",
    "swe-agent__test-repo-i1",
    "6e44b9__sweagenttestrepo-1c2844",
)
SMALL_WINDOW = CompactionConfig(context_window=1500, tail_tokens=200)
# Environment chrome and editor listings: never a gold fact.
CHROME = re.compile(r"bash-\$|\(Open file: |\(Current directory: |^\d+:|\[File: ", re.M)


@functools.cache
def _imported(path: Path) -> Transcript:
    return import_file(path).transcript


def _swe_transcript(shared_data: Path, stem: str) -> Transcript:
    path = shared_data / "swe-agent" / f"{stem}.traj"
    if not path.exists():
        pytest.skip(f"{path} not available")
    return _imported(path)


def _all_points(transcript: Transcript) -> list[tuple[CompactionPoint, list[Probe]]]:
    return [
        (point, generate_probes(transcript, point, ProbeConfig()))
        for point in find_points(transcript, SMALL_WINDOW)
    ]


@pytest.mark.parametrize("stem", TRAJECTORIES)
def test_swe_agent_trajectories(stem, shared_data):
    transcript = _swe_transcript(shared_data, stem)
    config = CompactionConfig(
        context_window=transcript.total_tokens, trigger_ratio=0.97, head_messages=3, tail_tokens=200
    )
    point = find_points(transcript, config)[-1]
    probes = generate_probes(transcript, point, ProbeConfig())
    _check_invariants(transcript, point, probes)
    assert {"artifact", "decision"} <= {p.type for p in probes}
    assert _facts(probes, "modified")  # the fix itself
    if stem.startswith("pydicom"):
        assert {"recall", "artifact"} <= {p.type for p in probes}
        assert "reproduce_bug.py" in _facts(probes, "created")
        assert any(
            f.endswith("pixel_data_handlers/numpy_handler.py") for f in _facts(probes, "modified")
        )
        assert any(
            f.startswith("AttributeError: Unable to convert the pixel data")
            for f in _facts(probes, "detail")
        )


@pytest.mark.parametrize("stem", TRAJECTORIES)
def test_swe_agent_trajectories_give_three_probe_types(stem, shared_data):
    transcript = _swe_transcript(shared_data, stem)
    found = _all_points(transcript)
    for point, probes in found:
        _check_invariants(transcript, point, probes)
        for fact in _facts(probes):
            assert not CHROME.search(fact), fact
    assert len({p.type for _, probes in found for p in probes}) >= 3


def test_swe_agent_issue_error_and_fix_decision(shared_data):
    transcript = _swe_transcript(shared_data, "swe-agent__test-repo-i1")
    probes = [p for _, probes in _all_points(transcript) for p in probes]
    # The report is the user's request, in the protected head since demonstrations are
    # prelude: every policy keeps it, so no probe asks about it.
    assert not [p for p in probes if "the user report" in p.question]
    assert _facts(_of(probes, "decision"), "choice") == {"add the missing colon"}
    assert _facts(_of(probes, "decision"), "rationale") == {
        "the function definition for `division` is missing a colon at the end"
    }


def test_swe_agent_verification_run_and_fix_decision(shared_data):
    transcript = _swe_transcript(shared_data, "pydicom__pydicom-1458")
    probes = [p for _, probes in _all_points(transcript) for p in probes]
    runs = [p for p in probes if "what did running `python reproduce_bug.py` print" in p.question]
    assert runs and _facts(runs) == {"Script completed successfully, no errors. Result: True"}
    (choice,) = _facts(_of(probes, "decision"), "choice")
    assert choice.startswith("modify this check to exclude 'PixelRepresentation'")
    assert "should not be required" in next(iter(_facts(_of(probes, "decision"), "rationale")))


# --- dialects: tool names and argument keys of other agents, SWE-agent text commands -----------


def _region_point(transcript: Transcript, tail: int = 1) -> CompactionPoint:
    return split_session(transcript, 2, len(transcript.messages) - 2 - tail, tail)


def _region_probes(region: list[dict], last: str = "done", **config: object) -> list[Probe]:
    """The probes about ``region`` (after HEAD, before one closing message), checked."""
    transcript = _transcript(HEAD + region + [_say(last)])
    point = _region_point(transcript)
    probes = generate_probes(transcript, point, ProbeConfig(**config or {"per_type": 20}))
    _check_invariants(transcript, point, probes)
    return probes


def test_file_operations_across_tool_dialects():
    region = [
        _call("view_file", {"file": "src/core/engine.py"}, "d1"),
        _result("d1", "def run():\n    return 1\n"),
        _call(
            "MultiEdit",
            {
                "file_path": "src/core/engine.py",
                "edits": [
                    {"old_string": "    return 1", "new_string": "    return run_pipeline(STAGES)"},
                ],
            },
            "d2",
        ),
        _result("d2", "Applied 1 edit"),
        _call(
            "create_file",
            {"filename": "src/core/stages.py", "content": "STAGE_NAMES = ['load', 'save']\n"},
            "d3",
        ),
        _result("d3", "created"),
        _call("bash", {"command": "touch notes.txt && mv notes.txt docs/notes.txt"}, "d4"),
        _result("d4", ""),
        _call("bash", {"command": "echo 'retries = 3' >> settings.ini"}, "d5"),
        _result("d5", ""),
        _call(
            "apply_patch",
            {
                "patch": (
                    "--- /dev/null\n+++ b/src/core/hooks.py\n@@ -0,0 +1 @@\n"
                    "+def on_stage_done(name):\n"
                    "--- a/src/core/old_api.py\n+++ b/src/core/old_api.py\n@@ -1 +1 @@\n"
                    "-LEGACY = True\n+LEGACY_MODE = False\n"
                )
            },
            "d6",
        ),
        _result("d6", "patched"),
        _call(
            "Edit", {"file_path": "src/core/missing.py", "old_string": "a", "new_string": "b"}, "d7"
        ),
        _result("d7", "Error: String to replace not found in file."),
        _call("grep", {"pattern": "TODO", "path": "src/core/todo_list.py"}, "d8"),
        _result("d8", "src/core/todo_list.py:3: TODO"),
    ]
    probes = _region_probes(region)
    assert _facts(probes, "created") == {
        "src/core/stages.py",
        "notes.txt",
        "docs/notes.txt",
        "src/core/hooks.py",
    }
    assert _facts(probes, "modified") == {
        "src/core/engine.py",
        "settings.ini",
        "src/core/old_api.py",
    }
    assert _facts(probes, "read") == set()  # engine.py was read, then modified; grep is a search
    changes = {p.question: _facts([p]) for p in _of(probes, "artifact")}
    assert "run_pipeline" in changes["What did we change in `src/core/engine.py`?"]
    assert "LEGACY_MODE" in changes["What did we change in `src/core/old_api.py`?"]
    assert "on_stage_done" in changes["What did we put in the new file `src/core/hooks.py`?"]


SWE_REGION = [
    _say("Let's write a reproduction script.\n\n```\ncreate repro.py\n```"),
    {
        "role": "user",
        "content": "[File: /repo/repro.py (1 lines total)]\n1:\n\n"
        "(Open file: /repo/repro.py)\n(Current directory: /repo)\nbash-$",
    },
    _say(
        "```\nedit 1:1\nfrom lib.core import parse_header\nprint(parse_header(b''))\n"
        "end_of_edit\n```"
    ),
    {
        "role": "user",
        "content": "[File: /repo/repro.py (2 lines total)]\n1:from lib.core import "
        "parse_header\nFile updated.\n(Open file: /repo/repro.py)",
    },
    _say("Run it.\n```\npython repro.py\n```"),
    {
        "role": "user",
        "content": 'Traceback (most recent call last):\n  File "repro.py", line 2\n'
        "IndexError: index out of range in parse_header\n"
        "(Open file: /repo/repro.py)",
    },
    _say("```\nopen src/lib/core.py 40\n```"),
    {
        "role": "user",
        "content": "[File: /repo/src/lib/core.py (120 lines total)]\n"
        "40:def parse_header(data):\n41:    return data[0]\n"
        "(Open file: /repo/src/lib/core.py)",
    },
    _say(
        "The crash is due to indexing an empty byte string.\n```\nedit 41:41\n"
        "    return data[0] if data else EMPTY_HEADER\nend_of_edit\n```"
    ),
    {
        "role": "user",
        "content": "[File: /repo/src/lib/core.py (120 lines total)]\n41:    return "
        "data[0] if data else EMPTY_HEADER\nFile updated.\n"
        "(Open file: /repo/src/lib/core.py)",
    },
]


def test_swe_agent_text_commands():
    probes = _region_probes(SWE_REGION, last="```\nsubmit\n```")
    assert _facts(probes, "created") == {"repro.py"}
    assert _facts(probes, "modified") == {"/repo/src/lib/core.py"}
    by_question = {p.question: p for p in probes}
    error = by_question["What exact error did `python repro.py` fail with?"]
    assert _facts([error]) == {"IndexError: index out of range in parse_header"}
    change = by_question["What did we change in `/repo/src/lib/core.py`?"]
    assert "EMPTY_HEADER" in _facts([change])
    assert _facts([by_question["What was the crash due to?"]]) == {"indexing an empty byte string"}


# --- the synthetic generator's sessions, against its planted ground truth ---------------------


def test_synthetic_session_agrees_with_ground_truth():
    synthetic = pytest.importorskip("benchmark.transcript.synthetic")
    transcript = synthetic.generate(seed=1, target_tokens=60000)
    config = CompactionConfig(context_window=50000, trigger_ratio=0.8, tail_tokens=8000)
    point = find_points(transcript, config)[-1]
    default = generate_probes(transcript, point, ProbeConfig())
    assert {p.type for p in default} == {"recall", "artifact", "continuation", "decision"}
    probes = generate_probes(transcript, point, ProbeConfig(per_type=50))
    _check_invariants(transcript, point, probes)

    planted = transcript.ground_truth

    def values(kind: str) -> set[str]:
        return {f.value for f in planted if f.kind == kind}

    assert _facts(probes, "created") and _facts(probes, "created") <= values("file_created")
    assert _facts(probes, "modified") and _facts(probes, "modified") <= values("file_modified")
    assert _facts(probes, "read") <= values("file_read")

    open_at_point = {
        f.value
        for f in planted
        if f.kind == "pending"
        and point.head_end <= f.message_index < point.tail_start
        and (f.details.get("closed_at") is None or f.details["closed_at"] >= point.end)
    }
    checklist = [p for p in probes if "plan or checklist" in p.question]
    assert checklist and _facts(checklist, "pending") <= open_at_point

    decisions = [f for f in planted if f.kind == "decision"]
    choices = [d.value for d in decisions]
    rationales = [d.details["rationale"] for d in decisions]
    rejected = [a for d in decisions for a in d.details["alternatives"]]
    # A fix announced in the message that edits the file: the planted pin and its reason.
    pins = [f for f in planted if f.kind == "version" and f.details.get("reason")]
    fixes = [f"pin {f.key} to {f.value}" for f in pins]
    rationales += [f.details["reason"] for f in pins]
    assert _facts(probes, "choice") and _facts(probes, "rationale")
    for text in _facts(probes, "choice"):
        assert any(text in c for c in choices) or any(f in text for f in fixes), text
    for text in _facts(probes, "rationale"):
        assert any(text in r for r in rationales), text
    for text in _facts(probes, "alternative"):  # a planted choice may itself say "instead of"
        assert any(text in a for a in rejected + choices), text

    errors = [f for f in planted if f.kind == "error"]
    compared = 0
    for probe in probes:
        if not probe.question.startswith("What exact error did"):
            continue
        shown = {e.message_index for e in probe.evidence}
        same_run = [f.value for f in errors if f.message_index in shown]
        for fact in probe.gold.of_kind("detail") if same_run else []:
            compared += 1
            assert any(fact.text in v or v in fact.text for v in same_run), (fact, same_run)
    assert compared

    for probe in probes:
        if probe.question.startswith("Which version of `"):
            package = probe.question.split("`")[1]
            pins = {f.value for f in planted if f.kind == "version" and f.key == package}
            assert {f.text for f in probe.gold.facts} <= pins, (probe.question, pins)


# --- an issue-fixing session: the error the user reported, the fix decided, the check run ------

FIX_REGION = [
    {
        "role": "user",
        "content": (
            "The nightly report crashes on legacy rows:\n```\nTraceback (most recent call last):\n"
            '  File "src/report.py", line 12, in row_station\n'
            "KeyError: 'station_id'\n```\nCan you fix it?"
        ),
    },
    _call("bash", {"command": "python src/report.py --rows 3"}, "r0"),
    _result("r0", "loaded 3 rows\n\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"),
    _call("open", {"_line": "open src/report.py 12", "path": "src/report.py"}, "r1"),
    _result(
        "r1",
        "[File: /repo/src/report.py (40 lines total)]\n"
        "11:def row_station(row):\n12:    return row['station_id']\n"
        "(Open file: /repo/src/report.py)\n(Current directory: /repo)\nbash-$",
    ),
    _call(
        "edit",
        {"_line": "edit 12:12", "new_str": "    return row.get('station_id', DEFAULT_STATION)"},
        "r2",
        content=(
            "The lookup on line 12 breaks for rows of the legacy feed, where the `station_id` "
            "column is missing. Let's use `row.get` with a default station to fix the crash."
        ),
    ),
    _result("r2", "File updated.\n(Open file: /repo/src/report.py)\nbash-$"),
    _call(
        "str_replace_editor",
        {
            "command": "str_replace",
            "path": "src/feeds.py",
            "old_str": "    return parse(line)",
            "new_str": "    return parse(line.rstrip(LEGACY_PADDING))",
        },
        "r3",
        content="The feed loader is wrong as well. Let's edit the code.",
    ),
    _result("r3", "The file src/feeds.py has been edited."),
    _say("Check it.\n```\npython scripts/migrate.py\n```"),
    {"role": "user", "content": "ModuleNotFoundError: No module named 'yaml'\nbash-$"},
    _call("bash", {"command": "python src/report.py --rows 3"}, "r4"),
    _result(
        "r4",
        "loaded 3 rows\nlegacy rows: 1\n\n(Open file: /repo/src/report.py)\n"
        "(Current directory: /repo)\nbash-$",
    ),
    _call("bash", {"command": "python scripts/backfill.py"}, "r5"),
    _result("r5", "backfilled 2 days"),
    _call("bash", {"command": "python scripts/backfill.py"}, "r6"),
    _result("r6", "Traceback (most recent call last):\nValueError: no days left to backfill"),
    _call("bash", {"command": "pytest -q tests/test_report.py"}, "r7"),
    _result("r7", "3 passed in 0.02s"),
    _call("bash", {"command": "cat src/report.py"}, "r8"),
    _result("r8", "def row_station(row):"),
]


@pytest.fixture(scope="module")
def fix_probes() -> tuple[Transcript, CompactionPoint, list[Probe]]:
    transcript = _transcript(HEAD + FIX_REGION + [_say("```\nsubmit\n```")])
    point = _region_point(transcript)
    return transcript, point, generate_probes(transcript, point, ProbeConfig(per_type=20))


def test_error_reported_by_the_user(fix_probes):
    transcript, point, probes = fix_probes
    _check_invariants(transcript, point, probes)
    reported = [p for p in probes if "the user report" in p.question]
    # Not the head's error, nor the text-protocol observation (a user message answering a call).
    assert len(reported) == 1 and _facts(reported) == {"KeyError: 'station_id'"}


def test_output_of_a_run_after_a_change(fix_probes):
    _, _, probes = fix_probes
    runs = {p.question: _facts([p]) for p in probes if "what did running" in p.question}
    assert runs == {
        "After we changed `src/feeds.py`, what did running `python src/report.py --rows 3` "
        "print?": {"loaded 3 rows", "legacy rows: 1"}
    }  # not the run before any change, a run that failed last, a test run or a `cat`
    for fact in _facts(probes):
        assert "bash-$" not in fact and "(Open file" not in fact and not fact.startswith("12:")


def test_fix_decided_before_an_edit(fix_probes):
    _, _, probes = fix_probes
    decisions = {p.question: p for p in _of(probes, "decision")}
    assert list(decisions) == ["What did we decide to change in `/repo/src/report.py`, and why?"]
    gold = next(iter(decisions.values())).gold
    assert {(f.kind, f.text) for f in gold.facts} == {
        ("choice", "use `row.get` with a default station"),
        ("rationale", "the `station_id` column is missing"),
    }
    assert "to fix the crash" in gold.answer  # the stated purpose, kept out of the facts


def _edit(path: str, call_id: str, said: str) -> list[dict]:
    args = {"path": path, "old_str": "    return None", "new_str": "    return DEFAULT_VALUE"}
    return [_call("edit_file", args, call_id, content=said), _result(call_id, "ok")]


def test_fix_decision_forms():
    region = [
        *_edit(
            "src/parse.py",
            "e1",
            "The parser fails on tab-separated rows. "
            "Normalizing the whitespace instead of splitting on single spaces.",
        ),
        *_edit("src/nulls.py", "e2", "I'll treat None as an empty string."),
        *_edit("src/view.py", "e3", "The header is not rendered. Let me open the template next."),
        *_edit(
            "src/cache.py",
            "e4",
            "Since the cache key ignores the locale, let's add the locale to `cache_key()`.",
        ),
    ]
    probes = _region_probes(region)
    found = {
        p.question.split("`")[1]: {(f.kind, f.text) for f in p.gold.facts}
        for p in _of(probes, "decision")
    }
    assert found == {
        "src/parse.py": {
            ("choice", "Normalizing the whitespace"),
            ("rationale", "The parser fails on tab-separated rows"),
            ("alternative", "splitting on single spaces"),
        },
        # "treat None as ..." states no reason; "open the template" changes nothing.
        "src/cache.py": {
            ("choice", "add the locale to `cache_key()`"),
            ("rationale", "the cache key ignores the locale"),
        },
    }


# --- tool-call arguments that need JSON escaping ------------------------------------------------

ESCAPE_REGION = [
    _call("bash", {"command": 'python -c "import yaml; print(yaml.__version__)"'}, "j1"),
    _result(
        "j1",
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'yaml'",
    ),
    _call(
        "Edit",
        {
            "file_path": "src/app/report.py",
            "old_string": "    return None",
            "new_string": '    return "N/A"',
        },
        "j2",
    ),
    _result("j2", "The file src/app/report.py has been updated."),
    _call("bash", {"command": 'python -c "from app.report import cell; print(cell(None))"'}, "j3"),
    _result("j3", "N/A"),
    _call(
        "bash", {"command": 'git add -A && git commit -m "Show \\"N/A\\" for empty cells"'}, "j4"
    ),
    _result(
        "j4",
        "Author identity unknown\n"
        "fatal: unable to auto-detect email address (got 'dev@box.(none)')",
    ),
]


def test_commands_that_need_json_escaping_keep_their_probes():
    probes = _region_probes(ESCAPE_REGION)
    by_question = {p.question: p for p in probes}
    # The rendered call shows the arguments' JSON; questions and gold say what it means.
    module = by_question["Which command failed with a `ModuleNotFoundError`?"]
    assert _facts([module]) == {'python -c "import yaml; print(yaml.__version__)"'}
    error = by_question[
        'What exact error did `python -c "import yaml; print(yaml.__version__)"` fail with?'
    ]
    assert _facts([error]) == {"ModuleNotFoundError: No module named 'yaml'"}
    commit = by_question[
        'What exact error did `git add -A && git commit -m "Show \\"N/A\\" for empty '
        'cells"` fail with?'
    ]
    assert _facts([commit]) == {"fatal: unable to auto-detect email address (got 'dev@box.(none)')"}
    run = by_question[
        "After we changed `src/app/report.py`, what did running "
        '`python -c "from app.report import cell; print(cell(None))"` print?'
    ]
    assert _facts([run]) == {"N/A"}
    change = by_question["What did we change in `src/app/report.py`?"]
    assert _facts([change]) == {'return "N/A"'}
    assert '\\"N/A\\"' in change.evidence[0].quote  # evidence: the message's spelling


def test_a_long_escaped_fact_is_clipped_as_the_log_means_it():
    command = 'python -c print("' + "a" * 181 + '","' + "b" * 40 + '")'
    region = [
        _call("bash", {"command": command}, "k1"),
        _result("k1", "NameError: name 'aaa' is not defined"),
    ]
    probes = _region_probes(region, types=["recall"])
    (probe,) = [p for p in probes if p.question.startswith("Which command")]
    (fact,) = _facts([probe])
    assert fact == command[:200] and '\\"' not in fact
    assert 'python -c print(\\"' in probe.evidence[0].quote


def test_spellings_of_a_text():
    assert spellings('say "hé"\n') == ['say "hé"\n', 'say \\"hé\\"\\n', 'say \\"h\\u00e9\\"\\n']
    assert spelled('a "b"', 'x: "a \\"b\\""') == 'a \\"b\\"'
    assert spelled("é", '"\\u00e9"') == "\\u00e9"
    assert spelled("absent", "text") is None
    assert [whole_escapes(t) for t in ("a\\", "a\\\\", "a\\u00", "a\\u00e9", "a\\\\\\")] == [
        "a",
        "a\\\\",
        "a",
        "a\\u00e9",
        "a\\\\",
    ]


# --- the agent's plan tool ------------------------------------------------------------------


def _todos(call_id: str, *items: tuple[str, str]) -> dict:
    todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
    return _call("TodoWrite", {"todos": todos}, call_id)


def test_plan_tool_state_at_the_point():
    region = [
        _todos("w1", ("Read the parser", "in_progress"), ("Draft a spike", "pending")),
        _result("w1", "Todos have been modified successfully."),
        _todos(
            "w2",
            ("Read the parser", "completed"),
            ("Fix the tab handling", "in_progress"),
            ('Handle "N/A" cells', "pending"),
            ("Update the changelog", "pending"),
            ("Benchmark the old parser", "cancelled"),
        ),
        _result("w2", "Todos have been modified successfully."),
        _say("Plan:\n- [ ] Tell the user about the tabs"),
    ]
    tail = [
        _todos(
            "w3",
            ("Read the parser", "completed"),
            ("Fix the tab handling", "completed"),
            ('Handle "N/A" cells', "in_progress"),
            ("Write the release notes", "pending"),
        ),
        _result("w3", "Todos have been modified successfully."),
    ]
    future = [_todos("w4", ('Handle "N/A" cells', "completed")), _result("w4", "ok")]
    transcript = _transcript(HEAD + region + tail + future)
    stop = len(HEAD) + len(region)
    point = CompactionPoint(
        transcript_id="fixture",
        ordinal=0,
        head_end=len(HEAD),
        tail_start=stop,
        end=stop + len(tail),
        tokens_before=0,
    )
    probes = generate_probes(transcript, point, ProbeConfig(types=["continuation"]))
    _check_invariants(transcript, point, probes)
    # Open at the point: still open in the tail's call (as the log means it), and
    # the written checklist's item; not the one done in the tail, nor the one the tail's call
    # dropped, nor the cancelled one, nor one only the earlier call or the tail lists.
    assert _facts(probes, "pending") == {'Handle "N/A" cells', "Tell the user about the tabs"}
    done = next(p for p in probes if "completed" in p.question)
    assert _facts([done]) == {"Read the parser"}
    assert all(ev.message_index == len(HEAD) + 2 for ev in done.evidence)


# --- patches fed to git apply / patch through the shell -----------------------------------------


def test_diffs_piped_to_git_apply_and_patch():
    def diff(path: str, old: str, new: str) -> str:
        return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"

    region = [
        _call(
            "bash",
            {
                "command": "git apply <<'EOF'\n"
                + diff("src/feed.py", "LIMIT = 1", "FEED_LIMIT = 50")
                + "EOF"
            },
            "g1",
        ),
        _result("g1", ""),
        _call(
            "bash",
            {
                "command": "cat <<'EOF' | patch -p1\n--- /dev/null\n+++ b/src/feed_cache.py\n"
                "@@ -0,0 +1 @@\n+def warm_feed_cache():\nEOF"
            },
            "g2",
        ),
        _result("g2", "patching file src/feed_cache.py"),
        _call(
            "bash",
            {"command": f"git apply --check <<'EOF'\n{diff('src/dry.py', 'A = 1', 'A = 2')}EOF"},
            "g3",
        ),
        _result("g3", ""),
        _call(
            "bash",
            {"command": f"patch -p1 <<'EOF'\n{diff('src/stale.py', 'B = 1', 'B_NEW = 2')}EOF"},
            "g4",
        ),
        _result("g4", "patching file src/stale.py\nHunk #1 FAILED at 1.\n1 out of 1 hunk FAILED"),
    ]
    probes = _region_probes(region)
    assert _facts(probes, "created") == {"src/feed_cache.py"}
    assert _facts(probes, "modified") == {"src/feed.py"}  # not a --check, not a failed patch
    changes = {p.question: _facts([p]) for p in _of(probes, "artifact")}
    assert "FEED_LIMIT" in changes["What did we change in `src/feed.py`?"]
    assert "warm_feed_cache" in changes["What did we put in the new file `src/feed_cache.py`?"]
