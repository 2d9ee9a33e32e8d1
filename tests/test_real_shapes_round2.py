"""Issue 27, round 2: logs of current tools written in their on-disk shapes (``real_shapes2``,
``real_shapes_agents``) through folder scans, the importer's reading, probes, preview and a
whole offline job. What the round-2 review found, each fixed at its root:

* a SWE-agent demonstration (``is_demo`` entries of another task, solved with tool calls)
  was read as the session's own work: "What did we change in <the demo's file>?", the
  demo's task taken as the log's task, and the real request left in the compacted region;
* Codex's undo snapshots (``ghost_snapshot``, written before each turn's edits) warned in
  every current rollout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from real_shapes import whole_region_probes
from real_shapes2 import AGENT, SESSION, claude_project
from real_shapes_agents import DEMO_FILE, codex_rollout, mini_v2, swe_agent_demo

from benchmark.run.compaction import CompactionConfig, protected_head_end
from benchmark.transcript.config import FileTranscripts
from benchmark.transcript.formats import import_file
from benchmark.transcript.sources import load_transcripts

ROOT = Path(__file__).resolve().parent.parent


def _gold(probes) -> dict[str, str]:
    return {p.question: " | ".join(f.text for f in p.gold.facts) for p in probes}


def test_a_swe_agent_demonstration_is_prelude_not_the_session(tmp_path: Path) -> None:
    imported = import_file(swe_agent_demo(tmp_path, filler=3))
    messages = imported.transcript.messages
    demo = [m for m in messages if m.name == "demonstration"]
    assert len(demo) == 1 and "TimeDelta" in (demo[0].content or "")
    assert not any(
        "marshmallow" in c.function.arguments for m in messages for c in m.tool_calls or []
    )
    # the protected head is the system prompt, the demonstration and the real request
    head = protected_head_end(messages, CompactionConfig(head_messages="auto"))
    assert head == 3 and "1h30m" in (messages[2].content or "")
    asked = _gold(whole_region_probes(imported.transcript))
    assert asked and not any("marshmallow" in q + g for q, g in asked.items()), asked
    assert any("durations/parse.py" in q for q in asked), asked
    # the task is the session's own, not the demonstration's (runs sharing a demo differ)
    other = swe_agent_demo(tmp_path / "other", filler=3)
    text = other.read_text().replace("1h30m", "2d4h").replace("minutes are ignored", "days lost")
    other.write_text(text)
    assert import_file(other).task != imported.task


def test_a_single_message_demonstration_opens_the_prelude(tmp_path: Path) -> None:
    """SWE-agent without ``put_demos_in_history`` (the real trajectories' shape): one user
    message opening with its demonstration template, then the issue."""
    data = json.loads(swe_agent_demo(tmp_path).read_text())
    demo = (
        "Here is a demonstration of how to correctly accomplish this task.\n--- DEMONSTRATION ---\n"
    )
    history = [
        data["history"][0],
        {"role": "user", "content": demo + "edit 1:1\n", "agent": "main"},
    ]
    history += [e for e in data["history"] if not e.get("is_demo")][1:]
    path = tmp_path / "single.traj"
    path.write_text(json.dumps({**data, "history": history}))
    messages = import_file(path).transcript.messages
    assert protected_head_end(messages, CompactionConfig(head_messages="auto")) == 3
    assert "1h30m" in (messages[2].content or "")


def test_codex_undo_snapshots_are_skipped_without_a_warning(tmp_path: Path) -> None:
    imported = import_file(codex_rollout(tmp_path, filler=2))
    assert not any("ghost_snapshot" in w for w in imported.warnings), imported.warnings
    asked = _gold(whole_region_probes(imported.transcript))
    failed = [g for q, g in asked.items() if q.startswith("Which command failed")]
    # the failure is the test run's, not the write_stdin poll that read its exit
    assert failed == ["pytest -q tests/test_cart.py"], asked
    assert any("src/shop/cart.py" in q for q in asked), asked


def test_a_claude_code_project_folder_loads_its_sessions_only(tmp_path: Path) -> None:
    project = claude_project(tmp_path, windows=True, filler=2)
    loaded = load_transcripts(FileTranscripts(kind="files", name="cc", path=str(project)))
    assert [t.id for t in loaded.transcripts] == [SESSION]
    skipped = {Path(s.path).name: s.error for s in loaded.manifest.skipped}
    assert set(skipped) == {
        f"agent-{AGENT}.jsonl",
        f"agent-{AGENT}.meta.json",
        "agent-9845a4a3.jsonl",
        "sessions-index.json",
    }, skipped
    assert all(why.endswith("skipped") for why in skipped.values())
    transcript = loaded.transcripts[0]
    asked = _gold(whole_region_probes(transcript))
    text = " ".join(q + g for q, g in asked.items())
    # the rejected Edit ("pass") changed nothing; the sub-agent's own Grep is not asked about
    assert "pass" not in text.split() and "SubGrep" not in text
    changed = next(
        g for q, g in asked.items() if q.startswith("What did we change in") and "export.py" in q
    )
    assert "if row.amount == 0:" in changed and "\\\\" not in text  # no JSON escaping in gold


def test_preview_and_an_offline_job_on_all_round2_shapes(tmp_path: Path) -> None:
    """One folder of every round-2 shape: preview reviews probes, and a whole offline job
    (a real subprocess) runs to its scorecard with the side files skipped."""
    logs = tmp_path / "logs"
    claude_project(logs / "claude", filler=6)
    codex_rollout(logs / "codex", filler=6)
    mini_v2(logs / "mini", filler=6)
    swe_agent_demo(logs / "swe", filler=6)
    window = ["compaction.context_window=1000", "compaction.tail_tokens=200"]
    preview = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark.preview",
            str(logs),
            *window,
            "--review",
            "6",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert preview.returncode == 0, preview.stderr
    assert "Traceback" not in preview.stderr + preview.stdout
    assert "probe(s) to review" in preview.stdout and DEMO_FILE not in preview.stdout
    job = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmark",
            "transcript=files",
            f"transcript.path={logs}",
            "tracking=disabled",
            *window,
            f"hydra.run.dir={tmp_path / 'out'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert job.returncode == 0, job.stderr[-2000:]
    said = job.stdout + job.stderr
    assert "Traceback" not in said and "error:" not in said
    assert "meta.json" in said and "sessions-index.json" in said  # skipped, and said so
