"""Side files of a copied Claude Code 2.x project folder (``agent-*.meta.json`` beside each
sub-agent log, settings, todos): skipped with a note in a scan, refused in one whole line when
named; the error line about a transcript is never cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compose_config
from test_cli import run_cli

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.preview import main as preview_main
from benchmark.transcript.manifest import SkippedFile
from benchmark.transcript.sources import SUBAGENT_SKIPPED, load_transcripts

SESSION = "5b1c0a7e-2f4d-4c1e-9a55-0c9d2e7f3a10"
BASE = {
    "userType": "external",
    "cwd": "/Users/dev/shop",
    "sessionId": SESSION,
    "version": "2.0.31",
    "gitBranch": "main",
}


def _event(uuid: str, kind: str, message: dict, **extra) -> dict:
    return {
        "parentUuid": None,
        "isSidechain": False,
        **BASE,
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": "2026-01-12T10:00:00.000Z",
        **extra,
    }


def _lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def project(tmp_path) -> dict[str, Path]:
    """``~/.claude/projects/<project>`` as Claude Code 2.x leaves it."""
    root = tmp_path / "-Users-dev-shop"
    call = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "find"}}
    session = _lines(
        root / f"{SESSION}.jsonl",
        [
            {"type": "summary", "summary": "Cart totals", "leafUuid": "u4"},
            _event("u1", "user", {"role": "user", "content": "Fix the cart total rounding."}),
            _event(
                "u2",
                "assistant",
                {"id": "msg_1", "role": "assistant", "content": [call]},
            ),
            _event(
                "u3",
                "user",
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "cart.py"}
                    ],
                },
            ),
            _event(
                "u4",
                "assistant",
                {"id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            ),
        ],
    )
    agents = root / SESSION / "subagents"
    agent = _lines(
        agents / "agent-a1b2c3d.jsonl",
        [
            _event("s1", "user", {"role": "user", "content": "find"}, isSidechain=True),
            _event(
                "s2",
                "assistant",
                {"id": "m9", "role": "assistant", "content": [{"type": "text", "text": "x"}]},
                isSidechain=True,
                agentId="a1b2c3d",
            ),
        ],
    )
    meta = agents / "agent-a1b2c3d.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "description": "Find the cart code"}))
    # Metadata that happens to carry a session id: still no conversation.
    meta_with_id = agents / "agent-e5f6a7b.meta.json"
    meta_with_id.write_text(json.dumps({"sessionId": SESSION, "agentType": "general-purpose"}))
    todos = root / "todos" / f"{SESSION}-agent-{SESSION}.json"
    todos.parent.mkdir()
    todos.write_text(json.dumps([{"content": "Fix", "status": "pending", "activeForm": "Fixing"}]))
    settings = root / "settings.local.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}}))
    return {
        "root": root,
        "session": session,
        "agent": agent,
        "meta": meta,
        "meta_with_id": meta_with_id,
        "todos": todos,
        "settings": settings,
    }


def _files(path, *overrides: str):
    config = compose_config(
        ["transcript=files", f"transcript.path={path}", "tracking=disabled", *overrides]
    )
    return validate(config).transcript


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_a_scan_skips_side_files_with_a_note_whatever_on_error_says(project, on_error):
    root = project["root"]
    for spec in (root, f"{root}/**/*.json*"):
        loaded = load_transcripts(_files(spec, f"transcript.on_error={on_error}"))
        assert [f.path for f in loaded.manifest.files] == [str(project["session"])]
        skipped = {s.path: s.error for s in loaded.manifest.skipped}
        assert skipped.pop(str(project["agent"])) == SUBAGENT_SKIPPED
        side = ("meta", "meta_with_id", "todos", "settings")
        assert sorted(skipped) == sorted(str(project[k]) for k in side)
        for error in skipped.values():
            assert error.startswith("not a session of any format") and error.endswith("skipped")


def test_a_broken_session_in_a_scan_still_stops_the_job(project):
    broken = project["root"] / "broken.jsonl"
    broken.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}\n')
    with pytest.raises(UserError, match="invalid JSON"):
        load_transcripts(_files(project["root"]))
    loaded = load_transcripts(_files(project["root"], "transcript.on_error=skip"))
    assert str(broken) in [s.path for s in loaded.manifest.skipped]


@pytest.mark.parametrize("which", ["meta", "meta_with_id", "todos", "settings"])
def test_a_side_file_named_directly_is_a_one_line_error(project, which):
    with pytest.raises(UserError) as caught:
        load_transcripts(_files(project[which]))
    message = str(caught.value)
    assert message.startswith(f"{project[which]}: ") and "\n" not in message
    assert not message.endswith("...")


def test_the_cli_prints_the_whole_error_line(project, tmp_path):
    """The file, the reason and the advice, to the end, on one line; exit 2."""
    meta = project["meta"]
    done = run_cli(
        [
            "transcript=files",
            f"transcript.path={meta}",
            f"tracking.store_dir={tmp_path / 'mlruns'}",
            f"cache.dir={tmp_path / 'cache'}",
        ],
        tmp_path,
    )
    assert done.returncode == 2
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: {meta}: unrecognised transcript format")
    assert line.endswith("(transcript.on_error=skip goes on without it)")
    assert "a Claude Code session or a Codex CLI rollout" in line


def test_preview_of_the_folder_skips_side_files(project, capsys):
    assert preview_main([str(project["root"])]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"skipped {project['meta']}: not a session of any format" in out
    assert "6 files, 0 could not be imported, 5 skipped" in out


def test_skipped_side_files_are_in_the_manifest_model(project):
    loaded = load_transcripts(_files(project["root"]))
    assert all(isinstance(s, SkippedFile) and s.line is None for s in loaded.manifest.skipped)
