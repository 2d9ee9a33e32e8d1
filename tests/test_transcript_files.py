"""``transcript=files``: paths, globs and folders of mixed formats, on_error, the manifest,
and the transcripts recorded in MLflow (real Hydra composition, a real MLflow store)."""

from __future__ import annotations

import gc
import hashlib
import json
import shutil
import weakref
from pathlib import Path

import pytest
from conftest import compose_config
from test_cli import run_cli

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.transcript.scan import expand_paths
from benchmark.transcript.sources import TranscriptStream, load_transcripts

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CHAT = FIXTURES / "chat" / "ledger_fix.jsonl"
SWE = FIXTURES / "swe_agent" / "slugify_function_calls.traj"
CODEX = FIXTURES / "codex"
CLAUDE = FIXTURES / "claude_code" / "session.jsonl"


def _files_config(path, *overrides: str):
    spec = json.dumps(path) if isinstance(path, list) else str(path)
    return validate(
        compose_config(
            ["transcript=files", f"transcript.path={spec}", "tracking=disabled", *overrides]
        )
    ).transcript


@pytest.fixture
def mixed(tmp_path) -> Path:
    """A folder as a user has one: formats mixed, nested, with files that are not sessions."""
    root = tmp_path / "sessions"
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copy(CHAT, root / "ledger_fix.jsonl")
    shutil.copy(SWE, root / "nested" / "slugify.traj")
    shutil.copy(CLAUDE, root / "nested" / "claude-session.jsonl")
    for rollout in sorted(CODEX.glob("*.jsonl")):
        shutil.copy(rollout, root / "nested" / "deeper" / rollout.name)
    (root / "LICENSE").write_text("MIT License\n")
    (root / "notes.md").write_text("# not a session\n")
    shutil.copy(CHAT, root / ".hidden" / "ignored.jsonl")
    return root


def test_folder_glob_file_and_list(mixed):
    codex = sorted(p.name for p in CODEX.glob("*.jsonl"))
    folder = expand_paths(str(mixed), [".jsonl", ".traj"])
    expected = ["ledger_fix.jsonl", "claude-session.jsonl", *codex, "slugify.traj"]  # by path
    assert [p.name for p in folder] == expected
    assert [p.name for p in expand_paths(f"{mixed}/**/*.traj")] == ["slugify.traj"]
    assert expand_paths(str(mixed / "notes.md")) == [mixed / "notes.md"]  # named: taken as is
    both = expand_paths([str(mixed / "ledger_fix.jsonl"), f"{mixed}/*.jsonl"])
    assert both == [mixed / "ledger_fix.jsonl"]  # each file once


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("nowhere/at/all.json", "no such file or folder"),
        ("{root}/*.parquet", "matches no file"),
        ("{root}/empty", "has no"),
    ],
)
def test_paths_that_name_nothing(tmp_path, spec, expected):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=expected) as err:
        expand_paths(spec.format(root=tmp_path), [".json"])
    assert "transcript.path" in str(err.value)


def test_mixed_formats_import_with_a_manifest(mixed):
    loaded = load_transcripts(_files_config(mixed))
    files = loaded.manifest.files
    codex = ["codex"] * len(list(CODEX.glob("*.jsonl")))
    assert [f.format for f in files] == ["chat", "claude_code", *codex, "swe_agent"]
    for f, t in zip(files, loaded.transcripts, strict=True):
        data = Path(f.path).read_bytes()
        assert f.sha256 == hashlib.sha256(data).hexdigest() and f.size == len(data)
        assert (f.transcript_id, f.messages, f.tokens) == (t.id, len(t.messages), t.total_tokens)
        assert f.tool_calls == sum(len(m.tool_calls or []) for m in t.messages)
    assert files[-1].warnings  # the trajectory's final submit has no observation
    assert loaded.manifest.skipped == [] and loaded.manifest.source == str(mixed)


def test_same_stem_in_two_folders_gets_two_ids(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(CHAT, tmp_path / sub / "session.jsonl")
    loaded = load_transcripts(_files_config(f"{tmp_path}/*/session.jsonl"))
    assert [t.id for t in loaded.transcripts] == ["session-0", "session-1"]


def test_same_stem_keeps_its_suffix_when_the_other_file_is_skipped(tmp_path):
    """Ids are fixed as files stream in: a name shared by two files found is suffixed
    even when one of them turns out unreadable."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    shutil.copy(CHAT, tmp_path / "a" / "session.jsonl")
    (tmp_path / "b" / "session.jsonl").write_text("")
    config = _files_config(f"{tmp_path}/*/session.jsonl", "transcript.on_error=skip")
    loaded = load_transcripts(config)
    assert [t.id for t in loaded.transcripts] == ["session-0"]
    assert [f.transcript_id for f in loaded.manifest.files] == ["session-0"]


def test_stream_holds_one_transcript_at_a_time(mixed):
    """A job streams its transcripts: the stream keeps none it has yielded, and its
    manifest grows as they come, ending as ``load_transcripts``'s."""
    stream = TranscriptStream(_files_config(mixed))
    previous: weakref.ref | None = None
    seen = 0
    for transcript in stream:
        seen += 1
        gc.collect()
        assert previous is None or previous() is None  # let go once the consumer did
        assert stream.ids[-1] == transcript.id and len(stream.manifest.files) == seen
        previous = weakref.ref(transcript)
        del transcript
    assert seen > 1
    assert stream.manifest == load_transcripts(_files_config(mixed)).manifest


def test_on_error_fail_and_skip(mixed):
    broken = mixed / "broken.json"
    broken.write_text('{"messages": [{"role": "user", "content": "hi"},')
    with pytest.raises(UserError) as err:
        load_transcripts(_files_config(mixed))
    message = str(err.value)
    assert message.startswith(f"{broken}: line 1: invalid JSON") and "on_error=skip" in message
    loaded = load_transcripts(_files_config(mixed, "transcript.on_error=skip"))
    assert (
        len(loaded.transcripts) == len(expand_paths(str(mixed), [".json", ".jsonl", ".traj"])) - 1
    )
    [skipped] = loaded.manifest.skipped
    assert skipped.path == str(broken) and skipped.error.startswith("line 1: invalid JSON")
    assert skipped.line == 1


def test_every_file_failing_is_one_error(tmp_path):
    for n in range(3):
        (tmp_path / f"empty{n}.json").write_text("")
    with pytest.raises(UserError, match="none of the 3 files could be imported"):
        load_transcripts(_files_config(tmp_path, "transcript.on_error=skip"))


def test_forced_format_must_match(tmp_path):
    with pytest.raises(UserError, match="'history' or 'trajectory'"):
        load_transcripts(_files_config(CHAT, "transcript.format=swe_agent"))
    with pytest.raises(UserError, match="transcript.format"):
        _files_config(CHAT, "transcript.format=pdf")


def test_job_over_a_mixed_folder_records_its_files_in_mlflow(mixed, tmp_path, mlflow_store):
    proc = run_cli(
        [
            "transcript=files",
            f"transcript.path={mixed}",
            "compaction.context_window=300",
            "compaction.tail_tokens=40",
            "cache.dir=null",
            "execution.progress=off",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    [run] = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    local = client.download_artifacts(run.info.run_id, "transcripts/manifest.json", str(tmp_path))
    manifest = json.loads(Path(local).read_text())
    # The set is one dataset input (one chip in the runs table, not one per file).
    [only] = run.inputs.dataset_inputs
    files = manifest["files"]
    assert len(files) == run.data.metrics["transcripts/files"] > 1
    assert only.dataset.name == f"{len(files)} logs in {mixed.name}/"
    hashes = [hashlib.sha256(Path(f["path"]).read_bytes()).hexdigest() for f in files]
    assert [f["sha256"] for f in files] == hashes
    joined = "\n".join(hashes).encode()
    assert only.dataset.digest == hashlib.sha256(joined).hexdigest()[:16]
    assert json.loads(only.dataset.source) == {"uri": str(mixed)}
    tags = {t.key: t.value for t in only.tags}
    assert tags["files"] == str(len(files))
    assert tags["formats"] == ",".join(sorted({f["format"] for f in files}))
    probes = json.loads(
        Path(client.download_artifacts(run.info.run_id, "probes.json", str(tmp_path))).read_text()
    )
    assert {p["transcript_id"] for p in probes} == {f["transcript_id"] for f in manifest["files"]}
