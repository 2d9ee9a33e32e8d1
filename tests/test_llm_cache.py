"""The LLM reply cache: stable keys, attempts, modes, durability, sharing, the CLI."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmark.cache import main as cache_main
from benchmark.errors import UserError
from benchmark.llm.reply_cache import FILENAME, CacheCorruptError, ResponseCache, request_key
from benchmark.run.storage import PROBE_DIR, SESSION_DIR, entry_path

MESSAGES = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": "Which file held the bug? Answer: src/importer/rows.py"},
]
BODY = {"messages": MESSAGES, "temperature": 0.0, "max_tokens": 512}
REPLY = {"text": '{"score": 4}', "input_tokens": 120, "output_tokens": 9, "note": "café ✓"}

# Worker processes import the cache module without benchmark/llm/__init__.py, which
# pulls in the openai SDK (~1.5 s a process); the module under test is the same file.
PRELUDE = """
import sys, types
from pathlib import Path
import benchmark
llm = types.ModuleType("benchmark.llm")
llm.__path__ = [str(Path(benchmark.__file__).parent / "llm")]
sys.modules["benchmark.llm"] = llm
from benchmark.llm.reply_cache import ResponseCache
"""
WRITER = (
    PRELUDE
    + """
folder, tag = sys.argv[1], sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
cache = ResponseCache(folder)
for i in range(200):
    cache.put(f"{tag}-{i}", i % 3, {"tag": tag, "i": i}, model=tag, role="judge")
    assert cache.get(f"{tag}-{i}", i % 3) == {"tag": tag, "i": i}
print("done", flush=True)
"""
)
KILLED = (
    PRELUDE
    + """
import time
cache = ResponseCache(sys.argv[1])
for i in range(50):
    cache.put(f"k{i}", 0, {"i": i}, role="answerer")
print("done", flush=True)
time.sleep(60)
"""
)


def _key(**changes) -> str:
    spec = {"api": "chat.completions", "model": "gpt-4.1-mini", "base_url": None, "body": BODY}
    return request_key(**{**spec, **changes})


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_key_ignores_dict_order_and_default_base_url_spelling():
    messages = [dict(reversed(m.items())) for m in MESSAGES]
    reordered = {"max_tokens": 512, "temperature": 0.0, "messages": messages}
    key = _key()
    assert len(key) == 64 and int(key, 16) >= 0
    assert _key(body=reordered) == key
    assert _key(base_url="https://api.openai.com/v1/") == key
    assert _key(base_url="http://localhost:8000/v1/") == _key(base_url="http://localhost:8000/v1")


@pytest.mark.parametrize(
    "change",
    [
        {"body": {**BODY, "messages": [*MESSAGES[:1], {"role": "user", "content": "Which?"}]}},
        {"body": {**BODY, "temperature": 0.7}},
        {"body": {**BODY, "response_format": {"type": "json_object"}}},
        {"model": "gpt-4.1"},
        {"base_url": "http://localhost:8000/v1"},
        {"api": "responses"},
    ],
)
def test_key_changes_with_anything_that_changes_the_reply(change):
    assert _key(**change) != _key()


def test_transport_settings_cannot_enter_the_key():
    with pytest.raises(ValueError, match="timeout"):
        _key(body={**BODY, "timeout": 30})


def test_get_put_attempts_and_overwrite(tmp_path):
    cache = ResponseCache(tmp_path)
    key = _key()
    assert cache.get(key) is None
    cache.put(key, 0, {"text": "not json"}, model="m", role="judge")
    cache.put(key, 1, REPLY, model="m", role="judge")
    assert cache.get(key) == {"text": "not json"}
    assert cache.get(key, 1) == REPLY
    assert cache.get(key, 2) is None
    cache.put(key, 0, {"text": "replaced"})
    assert cache.get(key) == {"text": "replaced"}
    with pytest.raises(TypeError):
        cache.put(key, 3, ["not", "a", "dict"])  # type: ignore[arg-type]
    cache.close()


def test_entries_persist_across_instances_and_stats_count_them(tmp_path):
    with ResponseCache(tmp_path) as cache:
        for i in range(5):
            cache.put(f"k{i}", 0, REPLY, model="small" if i < 3 else "big", role="judge")
        cache.put("k0", 1, REPLY, model="small", role="answerer")
    with ResponseCache(tmp_path) as again:
        assert again.get("k4") == REPLY
        stats = again.stats()
    assert stats.path == tmp_path / FILENAME
    assert stats.entries == 6
    assert stats.by_model == {"big": 2, "small": 4}
    assert stats.by_role == {"answerer": 1, "judge": 5}
    assert stats.bytes > 0 and stats.oldest is not None and stats.newest >= stats.oldest


def test_clear_removes_every_entry(tmp_path):
    with ResponseCache(tmp_path) as cache:
        for i in range(20):
            cache.put(f"k{i}", 0, REPLY)
        assert cache.clear() == 20
        assert cache.get("k0") is None
        assert cache.stats().entries == 0
        cache.put("k0", 0, REPLY)  # still usable after clearing
        assert cache.get("k0") == REPLY


def test_off_mode_touches_nothing(tmp_path):
    folder = tmp_path / "cache"
    cache = ResponseCache(folder, mode="off")
    cache.put("k", 0, REPLY)
    assert cache.get("k") is None
    assert cache.stats().entries == 0 and cache.clear() == 0
    assert not folder.exists()


def test_use_mode_reads_nothing_until_something_is_stored(tmp_path):
    folder = tmp_path / "cache"
    assert ResponseCache(folder).get("k") is None
    assert not folder.exists()


def test_refresh_mode_never_hits_but_stores(tmp_path):
    with ResponseCache(tmp_path) as old:
        old.put("k", 0, {"text": "old"})
    with ResponseCache(tmp_path, mode="refresh") as fresh:
        assert fresh.get("k") is None
        fresh.put("k", 0, {"text": "new"})
        fresh.put("k2", 0, {"text": "other"})
        assert fresh.get("k2") is None
    with ResponseCache(tmp_path) as use:
        assert use.get("k") == {"text": "new"}
        assert use.get("k2") == {"text": "other"}


def test_bad_mode_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cache.mode"):
        ResponseCache(tmp_path, mode="sometimes")  # type: ignore[arg-type]


def test_threads_share_one_instance(tmp_path):
    cache = ResponseCache(tmp_path)

    def work(tag: int) -> None:
        for i in range(50):
            cache.put(f"{tag}-{i}", 0, {"i": i})
            assert cache.get(f"{tag}-{i}") == {"i": i}

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.stats().entries == 400
    cache.close()


def test_two_processes_writing_at_once_corrupt_nothing(tmp_path):
    workers = [_python(WRITER, str(tmp_path), tag) for tag in ("a", "b")]
    for worker in workers:  # both started: release them together onto a file neither created
        assert worker.stdout.readline().strip() == "ready"
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    for worker in workers:
        out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
        assert out.strip() == "done"
    with ResponseCache(tmp_path) as cache:
        for tag in ("a", "b"):
            for i in range(200):
                assert cache.get(f"{tag}-{i}", i % 3) == {"tag": tag, "i": i}
        assert cache.stats().by_model == {"a": 200, "b": 200}
    with sqlite3.connect(tmp_path / FILENAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_sigkill_right_after_put_loses_nothing(tmp_path):
    worker = _python(KILLED, str(tmp_path))
    try:
        assert worker.stdout.readline().strip() == "done", worker.stderr.read()
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=30)
    assert worker.returncode == -signal.SIGKILL
    with ResponseCache(tmp_path) as cache:
        assert [cache.get(f"k{i}") for i in range(50)] == [{"i": i} for i in range(50)]


def test_a_garbage_file_is_a_one_line_error_naming_it(tmp_path):
    (tmp_path / FILENAME).write_bytes(b"this is not a database\n" * 200)
    for call in (lambda c: c.get("k"), lambda c: c.put("k", 0, REPLY), lambda c: c.stats()):
        with pytest.raises(CacheCorruptError) as err:
            call(ResponseCache(tmp_path))
        assert isinstance(err.value, UserError)
        assert str(tmp_path / FILENAME) in str(err.value)
        assert "\n" not in str(err.value)


def _fill(folder: Path) -> tuple[Path, Path]:
    """Ten replies, two probe sets and three generated sessions where their caches put them,
    and two user files."""
    with ResponseCache(folder) as cache:
        for i in range(10):
            role = "judge" if i % 2 else "answerer"
            cache.put(f"k{i}", 0, REPLY, model="gpt-4.1-mini", role=role)
    for key in ("a" * 64, "b" * 64):
        path = entry_path(folder, PROBE_DIR, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}", encoding="utf-8")
    for key in ("c" * 64, "d" * 64, "e" * 64):
        path = entry_path(folder, SESSION_DIR, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}", encoding="utf-8")
    mine, notes = folder / "probes" / "mine.json", folder / "notes.txt"
    mine.write_text("keep", encoding="utf-8")
    notes.write_text("keep", encoding="utf-8")
    return mine, notes


def test_cli_info_and_clear(tmp_path):
    shown, cleared = tmp_path / "shown", tmp_path / "cleared"
    _fill(shown)
    mine, notes = _fill(cleared)
    env = {**os.environ, "COLUMNS": "250"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmark.cache", "--dir", str(folder), action],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for folder, action in ((shown, "info"), (cleared, "clear"))
    ]
    (info_out, info_err), (clear_out, clear_err) = (run.communicate(timeout=60) for run in runs)
    assert [run.returncode for run in runs] == [0, 0], info_err + clear_err

    assert str(shown / FILENAME) in info_out
    assert "LLM replies" in info_out and "probe sets" in info_out
    for name, count in (("answerer", 5), ("judge", 5), ("gpt-4.1-mini", 10)):
        assert re.search(rf"{re.escape(name)}\W+{count}\b", info_out), info_out
    assert re.search(r"probe sets\W+\S+\W+2\b", info_out), info_out
    assert re.search(r"generated sessions\W+\S+\W+3\b", info_out), info_out

    assert "removed 10 LLM replies" in clear_out
    assert "removed 2 probe cache files" in clear_out
    assert "removed 3 session cache files" in clear_out
    assert not (cleared / "sessions").exists()
    assert ResponseCache(cleared).stats().entries == 0
    assert sorted(p.name for p in (cleared / "probes").iterdir()) == ["mine.json"]
    assert mine.read_text() == "keep" and notes.read_text() == "keep"
    assert ResponseCache(shown).stats().entries == 10  # info changed nothing


def test_cli_missing_folder_bad_argument_and_corrupt_store(tmp_path, capsys):
    missing = tmp_path / "missing"
    assert cache_main(["--dir", str(missing)]) == 0
    assert "is empty" in capsys.readouterr().out
    assert not missing.exists()

    with pytest.raises(SystemExit) as exit_:
        cache_main(["--dir", str(tmp_path), "purge"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1

    (tmp_path / FILENAME).write_bytes(b"garbage" * 100)
    assert cache_main(["--dir", str(tmp_path), "info"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / FILENAME) in err and err.count("\n") == 1
    assert cache_main(["--dir", str(tmp_path), "clear"]) == 0
    assert "removed corrupt" in capsys.readouterr().out
    assert not (tmp_path / FILENAME).exists()
