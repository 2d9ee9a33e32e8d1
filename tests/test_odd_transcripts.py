"""Odd transcript files a hostile (or unlucky) user hands the job: one clean line each.

Each case makes one entry in ``tmp_path``: not a regular file (a FIFO, a socket, a
symbolic link loop, a folder named ``*.jsonl``, a device), bytes that are no
transcript, JSON of the wrong shape, content nested thousands deep, secrets where a
role or a key belongs. Named on its own it is refused in one line naming it
(``on_error=fail``); met in a folder it is skipped and listed with why
(``on_error=skip``), and the rest of the folder is read. Every case runs in a daemon
thread, so a hang (a FIFO opened) fails the test instead of stalling the suite.
Multimodal content parts, by contrast, import: text kept, each other part a
typed placeholder, in every importer.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_cli import run_cli
from test_import_corrupt import VALID_NAME, _valid_session, skip_job, skipped_form

from benchmark.errors import UserError
from benchmark.transcript.config import FileTranscripts
from benchmark.transcript.formats import TranscriptError, import_file
from benchmark.transcript.sources import load_transcripts

DEADLINE_S = 60  # a case still running by then hangs: it fails, the suite goes on
TOKEN = "ghp_" + "Zq7Lw2Xv9Kc4Rb8Nt5Hm1Pf6Yd3Gs0Ja2Ue7"  # a GitHub token's shape, not a real one
DEEP = 5000

# --- the cases ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Path], None]  # creates the entry at the path
    expect: tuple[str, ...] = ()  # parts of the reason
    max_line_mb: float = 32


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _json(value: Any) -> Callable[[Path], None]:
    return _bytes(json.dumps(value).encode())


def _lines(*records: Any) -> Callable[[Path], None]:
    return _bytes("".join(json.dumps(r) + "\n" for r in records).encode())


def _chat(*messages: Any) -> Callable[[Path], None]:
    return _json({"messages": [{"role": "user", "content": "Fix the build."}, *messages]})


def _call(arguments: Any, call_id: str = "c1") -> dict[str, Any]:
    function = {"name": "bash", "arguments": arguments}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, **function}]}


def _tool_call(arguments: Any) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
    except OSError:
        pytest.skip("socket path too long for AF_UNIX")
    finally:
        server.close()  # the socket file stays


def _link(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(path.parent / target if "/" not in target else target)


def _loop_pair(path: Path) -> None:
    other = path.with_name(path.stem + "_mate.json")
    path.symlink_to(other)
    other.symlink_to(path)


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "notes.txt").write_text("not a transcript")


def _link_to_folder(path: Path) -> None:
    target = path.with_name(path.stem + "_target")
    target.mkdir()
    path.symlink_to(target, target_is_directory=True)


def _unreadable(path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a chmod 000 file")
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    path.chmod(0)


def _nested(depth: int, leaf: Any = 1) -> str:
    return "[" * depth + json.dumps(leaf) + "]" * depth


def _random_bytes(path: Path) -> None:
    rng = random.Random(14)
    path.write_bytes(bytes(rng.randrange(1, 256) for _ in range(4096)))


def _huge_line(path: Path) -> None:
    path.write_text(json.dumps({"role": "user", "content": "x" * 300_000}) + "\n")


CODEX_META = {"type": "session_meta", "payload": {"id": "s1", "instructions": "Be brief."}}


def _codex(item: dict[str, Any]) -> Callable[[Path], None]:
    return _lines(CODEX_META, {"type": "response_item", "payload": item})


def _claude(message: Any, kind: str = "user", **extra: Any) -> Callable[[Path], None]:
    return _lines({"type": kind, "sessionId": "s1", "message": message, **extra})


CASES: list[Case] = [
    # not a regular file
    Case("fifo.jsonl", _fifo, ("named pipe (FIFO)", "not a regular file")),
    Case("socket.jsonl", _socket, ("a socket",)),
    Case("self_loop.jsonl", _link("self_loop.jsonl"), ("symbolic link loop",)),
    Case("loop_pair.json", _loop_pair, ("symbolic link loop",)),
    Case("broken_link.jsonl", _link("nowhere.jsonl"), ("broken symbolic link",)),
    Case("dev_null.jsonl", _link("/dev/null"), ("character device",)),
    Case("unreadable.json", _unreadable, ("cannot read", "Permission denied")),
    # bytes that are no transcript
    Case("empty.jsonl", _bytes(b""), ("empty file",)),
    Case("blank_lines.jsonl", _bytes(b"\n\n  \n\t\n"), ("empty file",)),
    Case("nul_bytes.json", _bytes(b'{"messages": [\x00]}'), ("NUL bytes",)),
    Case("gzipped.jsonl", _bytes(gzip.compress(b'{"role": "user"}\n')), ("gzip",)),
    Case("utf16.json", _bytes('{"messages": []}'.encode("utf-16")), ("UTF-16",)),
    Case("utf32.json", _bytes('{"messages": []}'.encode("utf-32")), ("UTF-32",)),
    Case(
        "latin1.jsonl",
        _bytes('{"role": "user", "content": "caf\xe9"}\n'.encode("latin-1")),
        ("not UTF-8",),
    ),  # noqa: E501
    Case("random_bytes.traj", _random_bytes, ("not UTF-8",)),
    Case("yaml.traj", _bytes(b"history:\n  - role: user\n"), ("not JSON",)),
    Case("huge_line.jsonl", _huge_line, ("line 1", "transcript.max_line_mb"), max_line_mb=0.1),
    Case("cut_document.json", _bytes(b'{"messages": [{"role": "user", "con'), ("invalid JSON",)),
    Case(
        "cut_last_line.jsonl",
        _bytes(b'{"role": "user", "content": "a"}\n{"role": "assi'),
        ("line 2", "invalid JSON"),
    ),  # noqa: E501
    Case(
        "cr_only.jsonl",
        _bytes(b'{"role": "user", "content": "a"}\r{"role": "user"}\r'),
        ("invalid JSON",),
    ),  # noqa: E501
    Case("huge_number.json", _bytes(b'{"messages": [' + b"9" * 5000 + b"]}"), ("invalid JSON",)),
    # JSON of the wrong shape
    Case("null.json", _bytes(b"null"), ("JSON null",)),
    Case("number.json", _bytes(b"42"), ("JSON number",)),
    Case("string.json", _bytes(b'"a transcript"'), ("JSON string",)),
    Case("boolean.json", _bytes(b"true"), ("JSON boolean",)),
    Case("empty_list.json", _json([]), ("no messages",)),
    Case("empty_object.json", _json({}), ("unrecognised transcript format",)),
    Case("messages_text.json", _json({"messages": "hello"}), ("'messages' must be a list",)),
    Case("messages_numbers.json", _json({"messages": [1, 2]}), ("message 0", "expected an object")),  # noqa: E501
    Case("array_line.jsonl", _lines({"role": "user", "content": "a"}, [1, 2]), ("line 2",)),
    Case("role_missing.json", _chat({"content": "no role"}), ("message 1", "role")),
    Case("role_number.json", _chat({"role": 7, "content": "x"}), ("field 'role'",)),
    Case("content_number.json", _chat({"role": "assistant", "content": 3.5}), ("field 'content'",)),  # noqa: E501
    Case(
        "content_nan.json",
        _bytes(b'{"messages": [{"role": "user", "content": NaN}]}'),
        ("field 'content'",),
    ),  # noqa: E501
    Case(
        "part_without_type.json",
        _chat({"role": "user", "content": [{"foo": 1}]}),
        ("field 'content'", "'type'"),
    ),  # noqa: E501
    Case("tool_calls_text.json", _chat({"role": "assistant", "tool_calls": "ls"}), ("tool_calls",)),  # noqa: E501
    Case("tool_without_id.json", _chat({"role": "tool", "content": "ok"}), ("tool_call_id",)),
    Case("call_arguments_number.json", _chat(_tool_call(12)), ("arguments",)),
    Case(
        "call_id_number.jsonl",
        _codex({"type": "function_call", "call_id": 5, "name": "sh", "arguments": "{}"}),
        ("line 2", "call_id"),
    ),  # noqa: E501
    # nested past any parser's or walker's depth
    Case("deep_document.json", _bytes(_nested(DEEP).encode()), ("nested too deeply",)),
    Case(
        "deep_line.jsonl",
        _bytes(b'{"role": "user", "content": "a"}\n' + _nested(DEEP).encode()),
        ("line 2", "nested too deeply"),
    ),  # noqa: E501
    Case(
        "deep_arguments_text.json",
        _chat(_tool_call(_nested(DEEP))),
        ("nested more than 100 levels",),
    ),  # noqa: E501
    Case(
        "deep_arguments_150.json", _chat(_tool_call(_nested(150))), ("nested more than 100 levels",)
    ),  # noqa: E501
    Case(
        "deep_arguments_object.jsonl",
        _claude(
            {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"a": json.loads(_nested(400))},
                    }
                ],
            },
            "assistant",
        ),
        ("line 1", "nested more than 100 levels"),
    ),  # noqa: E501
    Case(
        "deep_codex_arguments.jsonl",
        _codex(
            {"type": "function_call", "call_id": "c1", "name": "sh", "arguments": _nested(DEEP)}
        ),
        ("line 2", "nested more than 100 levels"),
    ),  # noqa: E501
    Case(
        "deep_swe_arguments.traj",
        _json(
            {
                "history": [
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"id": "c1", "function": {"name": "bash", "arguments": _nested(DEEP)}}
                        ],
                    },
                ]
            }
        ),
        ("history[1]", "nested more than 100 levels"),
    ),  # noqa: E501
    Case(
        "deep_content_parts.json",
        _chat({"role": "user", "content": json.loads(_nested(300))}),
        ("field 'content'",),
    ),  # noqa: E501
    # secrets where a role, a key or the text belongs: redacted, then cut
    Case("token_role.json", _chat({"role": TOKEN, "content": "x"}), ("[REDACTED:github_token#1]",)),  # noqa: E501
    Case("token_key.jsonl", _lines({TOKEN: 1}, {TOKEN: 2}), ("unrecognised", "REDACTED")),
    Case(
        "token_codex_role.jsonl",
        _codex({"type": "message", "role": TOKEN, "content": "x"}),
        ("line 2", "REDACTED"),
    ),  # noqa: E501
    Case(
        "token_swe_role.traj",
        _json({"history": [{"role": TOKEN, "content": "x"}]}),
        ("unknown role", "REDACTED"),
    ),  # noqa: E501
    Case(
        "token_text.jsonl",
        _bytes(f"{TOKEN} leaked into a log\n".encode()),
        ("not JSON", "REDACTED"),
    ),  # noqa: E501
    Case(
        "token_call_id.jsonl",
        _codex({"type": "function_call_output", "call_id": ["x", TOKEN], "output": "ok"}),
        ("call_id", "REDACTED"),
    ),  # noqa: E501
    # each format's own wrong shapes
    Case("claude_message_text.jsonl", _claude("hello"), ("line 1", "field 'message'")),
    Case(
        "claude_block_number.jsonl",
        _claude({"role": "user", "content": [3]}),
        ("message.content.0",),
    ),  # noqa: E501
    Case(
        "claude_sidechain_only.jsonl",
        _claude({"role": "user", "content": "hi"}, isSidechain=True),
        ("sub-agent",),
    ),  # noqa: E501
    Case(
        "codex_payload_text.jsonl",
        _lines(CODEX_META, {"type": "response_item", "payload": "x"}),
        ("line 2", "payload"),
    ),  # noqa: E501
    Case("swe_history_text.traj", _json({"history": "all of it"}), ("'history' must be a list",)),
    Case("swe_step_text.traj", _json({"trajectory": ["ls"]}), ("trajectory[0]",)),
    Case(
        "mini_message_text.traj.json",
        _json({"info": {"mini_version": "1"}, "messages": ["hi"]}),
        ("messages[0]",),
    ),  # noqa: E501
    Case(
        "mini_content_number.traj.json",
        _json({"info": {"exit_status": "x"}, "messages": [{"role": "user", "content": 5}]}),
        ("messages[0]", "content"),
    ),  # noqa: E501
]
NOT_FILES = {"fifo.jsonl", "socket.jsonl", "self_loop.jsonl", "loop_pair.json", "dev_null.jsonl"}
NOT_FILES |= {"broken_link.jsonl"}
FOLDERS = [
    Case("folder.jsonl", _folder, ("a folder, not a file",)),
    Case("link_to_folder.jsonl", _link_to_folder, ("symbolic link to a folder",)),
]


def _within(action: Callable[[], Any]) -> Any:
    """``action``'s result or exception, run in a daemon thread: a hang fails the test."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"still running after {DEADLINE_S} s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _config(path: Path, on_error: str = "fail", max_line_mb: float = 32) -> FileTranscripts:
    return FileTranscripts(
        kind="files", name="files", path=str(path), on_error=on_error, max_line_mb=max_line_mb
    )


def _assert_clean(message: str, path: Path, expect: tuple[str, ...]) -> None:
    assert "\n" not in message and "\r" not in message, message
    assert "Traceback" not in message and str(path) in message, message
    assert len(message) < 400, message
    for part in expect:
        assert part in message, f"{part!r} not in {message!r}"
    assert not any(TOKEN[i : i + 8] in message for i in range(len(TOKEN) - 7)), message


# --- tests --------------------------------------------------------------------------------


def test_the_battery_is_large_and_distinct():
    names = [c.name for c in CASES + FOLDERS]
    assert len(names) >= 50 and len(set(names)) == len(names)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_importing_an_odd_file_is_one_line_naming_it(tmp_path, case):
    path = tmp_path / case.name
    case.make(path)
    with pytest.raises(TranscriptError) as info:
        _within(lambda: import_file(path, max_line_bytes=int(case.max_line_mb * 2**20)))
    assert info.value.path == str(path)
    _assert_clean(str(info.value), path, case.expect)


@pytest.mark.parametrize("case", CASES + FOLDERS, ids=[c.name for c in CASES + FOLDERS])
def test_named_as_the_path_it_is_refused_in_one_line(tmp_path, case):
    """``on_error=fail`` with the file as ``transcript.path``: a ``UserError``, one line."""
    path = tmp_path / case.name
    case.make(path)
    with pytest.raises(UserError) as info:
        _within(lambda: load_transcripts(_config(path, max_line_mb=case.max_line_mb)))
    _assert_clean(str(info.value), path, () if case in FOLDERS else case.expect)


def test_a_folder_of_odd_entries_skips_and_lists_each_with_why(tmp_path):
    """``on_error=skip``: the good file is read; every odd entry is in the manifest."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    made = []
    for case in CASES + FOLDERS:
        if case.max_line_mb != 32:
            continue  # its limit is not the folder's
        try:
            case.make(folder / case.name)
        except pytest.skip.Exception:
            continue
        made.append(case)
    (folder / VALID_NAME).write_text(json.dumps({"messages": _valid_session()}))
    (folder / ".hidden.jsonl").write_text("{}")
    (folder / "README.md").write_text("notes")
    loaded = _within(lambda: load_transcripts(_config(folder, "skip")))
    assert [f.path for f in loaded.manifest.files] == [str(folder / VALID_NAME)]
    skipped = {s.path: s for s in loaded.manifest.skipped}
    for case in made:
        entry = skipped.pop(str(folder / case.name))
        expect = tuple(map(skipped_form, case.expect))
        _assert_clean(f"{entry.path}: {entry.error}", folder / case.name, expect)
        if any(part.startswith("line ") for part in case.expect):
            assert entry.line is not None and entry.error.startswith(f"line {entry.line}: ")
    # only what the cases made besides themselves (a loop's mate, a link's target folder)
    assert all("_mate" in path or "_target" in path for path in skipped), sorted(skipped)
    assert loaded.manifest.passed_over["hidden (name starts with '.')"] == 1
    assert loaded.manifest.passed_over["not a transcript.extensions file"] >= 2


def test_a_job_over_odd_entries_skips_them_and_lists_each(tmp_path, mlflow_store):
    folder = tmp_path / "sessions"
    folder.mkdir()
    odd = {c.name: c for c in CASES + FOLDERS}
    names = ["fifo.jsonl", "self_loop.jsonl", "folder.jsonl", "broken_link.jsonl"]
    names += ["deep_arguments_text.json", "deep_line.jsonl", "token_role.json", "latin1.jsonl"]
    for name in names:
        odd[name].make(folder / name)
    (folder / VALID_NAME).write_text(json.dumps({"messages": _valid_session()}))
    proc = run_cli([*skip_job(folder), "execution.progress=off"], tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in output
    assert not any(TOKEN[i : i + 8] in output for i in range(len(TOKEN) - 7))
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    [run] = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    local = client.download_artifacts(run.info.run_id, "transcripts/manifest.json", str(tmp_path))
    manifest = json.loads(Path(local).read_text())
    assert [f["path"] for f in manifest["files"]] == [str(folder / VALID_NAME)]
    skipped = {s["path"]: s["error"] for s in manifest["skipped"]}
    assert sorted(skipped) == sorted(str(folder / name) for name in names)
    for name in names:
        expect = tuple(map(skipped_form, odd[name].expect))
        _assert_clean(f"{folder / name}: {skipped[str(folder / name)]}", folder / name, expect)
        assert f"skipped {folder / name}: " in output  # the job log names it too


# --- multimodal parts: imported, not refused -----------------------------------------------

IMAGE_PNG = "data:image/png;base64,iVBORw0KGgo="


def _imported(tmp_path: Path, name: str, make: Callable[[Path], None]) -> list[str]:
    path = tmp_path / name
    make(path)
    return [m.content or "" for m in import_file(path).transcript.messages]


def test_chat_parts_keep_text_and_name_the_rest(tmp_path):
    parts = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": IMAGE_PNG}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"filename": "report.pdf", "file_data": "JVBERi0="}},
        {"type": "file", "file": {"file_data": "JVBERi0="}},
    ]
    result = [{"type": "text", "text": "exit 0"}, {"type": "image_url", "image_url": {"url": "x"}}]
    contents = _imported(
        tmp_path,
        "multimodal.json",
        _chat(
            {"role": "user", "content": parts},
            _tool_call('{"command": "ls"}'),
            {"role": "tool", "tool_call_id": "c1", "content": result},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot."}]},
        ),
    )
    assert contents[1] == (
        "What is in these?\n[image omitted]\n[audio omitted]\n[file omitted: report.pdf]\n"
        "[file omitted]"
    )
    assert contents[3] == "exit 0\n[image omitted]"
    assert contents[4] == "I cannot."


def test_responses_parts_in_a_codex_rollout(tmp_path):
    parts = [
        {"type": "input_text", "text": "Compare:"},
        {"type": "input_image", "image_url": IMAGE_PNG},
        {"type": "input_file", "filename": "spec.md", "file_data": "IyBzcGVj"},
    ]
    contents = _imported(
        tmp_path,
        "rollout.jsonl",
        _lines(
            CODEX_META,
            {
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": parts},
            },  # noqa: E501
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Done."}],
                },
            },  # noqa: E501
        ),
    )
    assert contents[1:] == ["Compare:\n[image omitted]\n[file omitted: spec.md]", "Done."]


def test_claude_code_images_and_documents(tmp_path):
    user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Read this."},
            {"type": "image", "source": {"type": "base64", "data": "iVBO"}},
            {"type": "document", "title": "design.pdf", "source": {"type": "base64"}},
        ],
    }
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.png"}}
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "image", "source": {"type": "base64", "data": "iVBO"}}],
    }
    contents = _imported(
        tmp_path,
        "claude.jsonl",
        _lines(
            {"type": "user", "sessionId": "s", "message": user},
            {
                "type": "assistant",
                "sessionId": "s",
                "message": {"id": "m1", "role": "assistant", "content": [call]},
            },  # noqa: E501
            {"type": "user", "sessionId": "s", "message": {"role": "user", "content": [result]}},
        ),
    )
    assert contents[0] == "Read this.\n[image omitted]\n[file omitted: design.pdf]"
    assert contents[2] == "[image omitted]"


def test_swe_agent_and_mini_swe_agent_parts(tmp_path):
    parts = [
        {"type": "text", "text": "Screenshot:"},
        {"type": "image_url", "image_url": {"url": "x"}},
    ]  # noqa: E501
    swe = _imported(
        tmp_path,
        "run.traj",
        _json(
            {
                "history": [
                    {"role": "user", "content": parts},
                    {"role": "assistant", "content": "ok"},
                ]
            }
        ),  # noqa: E501
    )
    mini = _imported(
        tmp_path,
        "run.traj.json",
        _json(
            {
                "info": {"mini_version": "1"},
                "messages": [
                    {"role": "user", "content": parts},
                    {"role": "assistant", "content": "ok"},
                ],
            }
        ),  # noqa: E501
    )
    assert swe[0] == mini[0] == "Screenshot:\n[image omitted]"


def test_a_byte_order_mark_is_read_past(tmp_path):
    contents = _imported(
        tmp_path,
        "bom.json",
        _bytes(
            b"\xef\xbb\xbf" + json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
        ),
    )  # noqa: E501
    assert contents == ["hi"]
