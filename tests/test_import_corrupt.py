"""Corrupted transcript files: each is one short line naming the file, never a traceback.

The corpus is generated at test time from small valid seeds of the four formats
(OpenAI chat, SWE-agent .traj, Claude Code, Codex CLI), cut, retyped and mangled
the ways real files break: truncated writes, wrong types, unknown roles, binary
junk, wrong encodings, runaway lines, absurd nesting. A job over a folder of
them skips each with one warning (``on_error=skip``) or stops at the first with
one line (``on_error=fail``).
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_cli import run_cli

from benchmark.transcript.config import FileTranscripts
from benchmark.transcript.formats import TranscriptError, import_file
from benchmark.transcript.formats._document import MAX_REASON_CHARS
from benchmark.transcript.sources import load_transcripts

# --- valid seeds ---------------------------------------------------------------------------


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent working in /srv/shop."},
    {"role": "user", "content": "The checkout total ignores discounts; fix it."},
    {
        "role": "assistant",
        "content": "Reading the pricing module first.",
        "tool_calls": [_call("call_1", "read_file", {"path": "shop/pricing.py"})],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "def total(items):\n    return sum(i.price for i in items)\n",
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            _call("call_2", "run_shell", {"command": "pytest tests/test_pricing.py -q"})
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_2",
        "content": "FAILED tests/test_pricing.py::test_discount",
    },
    {"role": "assistant", "content": "total() never subtracts the discount; applying it now."},
]

SWE: dict[str, Any] = {
    "environment": "swe_main",
    "history": [
        {
            "role": "system",
            "content": "You edit a repository through shell commands, one per turn.",
        },
        {"role": "user", "content": "paginate() drops the last page; fix it."},
        {
            "role": "assistant",
            "content": "Open the module.",
            "thought": "Open the module.",
            "action": "open src/pages.py",
        },
        {
            "role": "user",
            "content": "[File: src/pages.py (40 lines total)]\n1:def paginate(items, size):",
        },
        {
            "role": "assistant",
            "content": "Run the tests.",
            "tool_calls": [_call("call_a", "bash", {"command": "pytest -q tests/test_pages.py"})],
        },
        {"role": "tool", "content": "3 passed", "tool_call_ids": ["call_a"]},
    ],
    "info": {"exit_status": "submitted"},
}

_SESSION = "0b7d2c1e-5a44-4d8e-9a51-2f6c3e9d1a70"
CLAUDE: list[dict[str, Any]] = [
    {
        "type": "user",
        "sessionId": _SESSION,
        "uuid": "u-1",
        "parentUuid": None,
        "message": {"role": "user", "content": "Add a --verbose flag to the CLI."},
    },
    {
        "type": "assistant",
        "sessionId": _SESSION,
        "uuid": "u-2",
        "parentUuid": "u-1",
        "message": {
            "id": "msg_01",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the CLI module."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Read",
                    "input": {"file_path": "/repo/cli.py"},
                },
            ],
        },
    },
    {
        "type": "user",
        "sessionId": _SESSION,
        "uuid": "u-3",
        "parentUuid": "u-2",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "import argparse"}
            ],
        },
    },
    {
        "type": "assistant",
        "sessionId": _SESSION,
        "uuid": "u-4",
        "parentUuid": "u-3",
        "message": {
            "id": "msg_02",
            "role": "assistant",
            "content": [{"type": "text", "text": "Added --verbose."}],
        },
    },
]

CODEX: list[dict[str, Any]] = [
    {
        "timestamp": "2025-09-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "c0dex-1", "timestamp": "2025-09-01T10:00:00.000Z", "cwd": "/repo"},
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Rename load_cfg to load_config."}],
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["rg", "load_cfg"]}),
            "call_id": "call_x",
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": "call_x",
            "output": "src/cfg.py:12:def load_cfg():",
        },
    },
    {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Renamed."}],
        },
    },
]


def _doc(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def _lines(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _set(records: list[Any], index: int, path: str, value: Any) -> list[Any]:
    """A deep copy of ``records`` with ``records[index].<path>`` set (``path`` dotted, empty
    for the record itself; ``_drop_`` as value deletes the key)."""
    out = json.loads(json.dumps(records))
    if not path:
        out[index] = value
        return out
    target = out[index]
    *parents, last = path.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if isinstance(target, list):
        target[int(last)] = value
    elif value == "_drop_":
        del target[last]
    else:
        target[last] = value
    return out


def _history(index: int, path: str, value: Any) -> bytes:
    return _doc({**SWE, "history": _set(SWE["history"], index, path, value)})


def _cut(data: bytes, at: int) -> tuple[bytes, str]:
    """``data`` truncated at ``at``, and the line the parser stops on."""
    lines = data[:at].count(b"\n") + 1
    return data[:at], f"line {lines}"


def _cut_line(data: bytes, line: int) -> bytes:
    """JSON Lines cut in the middle of 1-based ``line`` (a write that never finished)."""
    rows = data.split(b"\n")
    return b"\n".join([*rows[: line - 1], rows[line - 1][: len(rows[line - 1]) // 2]])


def _with_byte(data: bytes, line: int, junk: bytes) -> bytes:
    """``data`` with ``junk`` inserted in the middle of 1-based ``line``."""
    rows = data.split(b"\n")
    row = rows[line - 1]
    rows[line - 1] = row[: len(row) // 2] + junk + row[len(row) // 2 :]
    return b"\n".join(rows)


# --- the corpus ---------------------------------------------------------------------------

HUGE_LINE_BYTES = 50 * 2**20


@dataclass(frozen=True)
class Case:
    name: str  # the file's name in the corpus (its extension picks it up in a folder scan)
    data: bytes | Callable[[Path], None]  # bytes, or a writer for a file too big to build inline
    expect: tuple[str, ...]  # substrings of the error (besides the path)


def _write_huge_line(path: Path) -> None:
    """A valid first message, then a 50 MB tool result on line 2."""
    with path.open("wb") as f:
        f.write(json.dumps(CHAT[0]).encode() + b"\n")
        f.write(b'{"role": "tool", "tool_call_id": "call_1", "content": "')
        block = b"0123456789abcdef" * 2**16  # 1 MB
        for _ in range(HUGE_LINE_BYTES // len(block)):
            f.write(block)
        f.write(b'"}\n')


_SEEDS_BY_NAME = {"chat": CHAT, "claude": CLAUDE, "codex": CODEX}


def _edited_cases() -> list[Case]:
    """The rows of ``fixtures/corrupt/edits.json``: a seed with one field changed, or a
    whole document, encoded as the name's suffix says."""
    rows = json.loads((Path(__file__).parent / "fixtures" / "corrupt" / "edits.json").read_text())
    cases = []
    for row in rows["cases"]:
        name, expect = row["name"], tuple(row["expect"])
        if "doc" in row:
            doc = row["doc"]
            data = _lines(doc) if name.endswith(".jsonl") else _doc(doc)
        elif row["seed"] == "swe":
            data = _history(*row["set"])
        else:
            edited = _set(_SEEDS_BY_NAME[row["seed"]], *row["set"])
            data = _lines(edited) if name.endswith(".jsonl") else _doc(edited)
        cases.append(Case(name, data, expect))
    return cases


def _cases() -> list[Case]:
    chat_doc, chat_lines, swe = _doc({"messages": CHAT}), _lines(CHAT), _doc(SWE)
    claude, codex = _lines(CLAUDE), _lines(CODEX)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00"
    cut_third, third_line = _cut(chat_doc, len(chat_doc) // 3)
    cut_two_thirds, two_thirds_line = _cut(chat_doc, 2 * len(chat_doc) // 3)
    cut_swe, swe_line = _cut(swe, len(swe) // 2)
    invalid_doc_line = 9
    deep = "[" * 100_000
    big_int = "7" * 5000
    return [
        # Bytes that are not a JSON transcript at all.
        Case("empty.json", b"", ("empty file",)),
        Case("blank_lines.jsonl", b"\n   \n\t\r\n", ("empty file",)),
        Case("random_bytes.json", random.Random(20250901).randbytes(4096), ("binary",)),
        Case("png_header.json", png, ("binary", "NUL")),
        Case("gzipped_chat.jsonl", gzip.compress(chat_lines, mtime=0), ("gzip",)),
        Case("utf16_chat.json", chat_doc.decode().encode("utf-16"), ("not UTF-8", "UTF-16")),
        Case("utf16le_no_bom.jsonl", chat_lines.decode().encode("utf-16-le"), ("binary", "line 1")),
        Case("nul_in_line_3.jsonl", _with_byte(chat_lines, 3, b"\x00"), ("line 3", "NUL")),
        Case(
            "invalid_utf8_line_2.jsonl",
            _with_byte(chat_lines, 2, b"\xc3\x28"),
            ("line 2", "not UTF-8"),
        ),
        Case(
            "invalid_utf8_mid_doc.json",
            _with_byte(chat_doc, invalid_doc_line, b"\xff"),
            (f"line {invalid_doc_line}", "not UTF-8"),
        ),
        Case(
            "latin1.traj", swe.replace(b"module", "modul\u00e9".encode("latin-1")), ("not UTF-8",)
        ),
        Case("claude_invalid_utf8.jsonl", _with_byte(claude, 4, b"\x80"), ("line 4", "not UTF-8")),
        Case("huge_line.jsonl", _write_huge_line, ("line 2", "32 MB limit", "max_line_mb")),
        Case("plain_text.json", b"user: fix the tests\nassistant: done\n", ("not JSON",)),
        Case("markdown.jsonl", b"# Session\n\n- user: hi\n", ("not JSON",)),
        Case("null.json", b"null", ("JSON null",)),
        Case("number.json", b"42\n", ("JSON number",)),
        Case("string.json", b'"text"', ("JSON string",)),
        Case("boolean.jsonl", b"true\n", ("JSON boolean",)),
        Case(
            "big_int.json",
            f'{{"messages": [{{"role": "user", "content": {big_int}}}]}}'.encode(),
            ("invalid JSON", "4300 digits"),
        ),
        Case(
            "big_int_line_2.jsonl",
            _lines(_set(CHAT, 1, "content", "BIG")).replace(b'"BIG"', big_int.encode()),
            ("line 2", "invalid JSON"),
        ),
        Case("deep_open.json", deep.encode(), ("nested too deeply",)),
        Case("deep_closed.json", (deep + "]" * 100_000).encode(), ("nested too deeply",)),
        Case(
            "deep_line_3.jsonl",
            _lines(CHAT[:2]) + f'{{"role": "user", "content": {deep}{"]" * 100_000}}}\n'.encode(),
            ("line 3", "nested too deeply"),
        ),
        # Truncated writes.
        Case("chat_cut_after_1_byte.json", chat_doc[:1], ("line 1", "invalid JSON")),
        Case("chat_cut_a_third.json", cut_third, (third_line, "invalid JSON")),
        Case("chat_cut_two_thirds.json", cut_two_thirds, (two_thirds_line, "invalid JSON")),
        Case("chat_cut_last_brace.json", chat_doc[:-1], ("invalid JSON",)),
        Case("chat_cut_line_1.jsonl", chat_lines[:30], ("line 1", "invalid JSON")),
        Case("chat_cut_mid_line_5.jsonl", _cut_line(chat_lines, 5), ("line 5", "invalid JSON")),
        Case("swe_cut_half.traj", cut_swe, (swe_line, "invalid JSON")),
        Case("claude_cut_mid_line_3.jsonl", _cut_line(claude, 3), ("line 3", "invalid JSON")),
        Case("codex_cut_mid_line_4.jsonl", _cut_line(codex, 4), ("line 4", "invalid JSON")),
        Case(
            "chat_messages_object.json", _doc({"messages": CHAT[1]}), ("'messages' must be a list",)
        ),
        Case(
            "chat_message_is_string.json",
            _doc([CHAT[0], "hello"]),
            ("message 1", "expected an object"),
        ),
        Case("chat_list_of_numbers.json", b"[1, 2, 3]", ("message 0", "expected an object")),
        Case(
            "chat_dataset_rows.jsonl",
            _lines([{"messages": CHAT}, {"messages": CHAT[:2]}]),
            ("line 1", "one conversation per line"),
        ),
        Case(
            "unknown_long_keys.jsonl",
            _lines([{f"{'k' * 500}{n}": n for n in range(20)}] * 2),
            ("unrecognised",),
        ),
        Case(
            "chat_long_unknown_role.jsonl",
            _lines(_set(CHAT, 1, "role", "r" * 5000)),
            ("line 2", "field 'role'", "'rrrr"),
        ),
        Case(
            "claude_unknown_event_types.jsonl",
            _lines([{**r, "type": "narration"} for r in CLAUDE]),
            ("no messages",),
        ),
        # Wrong types, unknown roles, calls and results without ids, per format (a data table).
        *_edited_cases(),
    ]


CASES = _cases()
SEEDS = {
    "chat.json": (_doc({"messages": CHAT}), "chat"),
    "chat.jsonl": (_lines(CHAT), "chat"),
    "session.traj": (_doc(SWE), "swe_agent"),
    "claude.jsonl": (_lines(CLAUDE), "claude_code"),
    "rollout.jsonl": (_lines(CODEX), "codex"),
}
VALID_NAME = "valid_session.json"


def _valid_session() -> list[dict[str, Any]]:
    """A chat session long enough to compact under a 4000-token window."""
    messages: list[dict[str, Any]] = [*CHAT[:2]]
    for n in range(14):
        path = f"shop/module_{n}.py"
        body = "\n".join(
            f"def step_{n}_{k}(cart, rate={k}):\n    return apply(cart, rate * {n + k}) + {k}"
            for k in range(12)
        )
        messages.append(
            {
                "role": "assistant",
                "content": f"Reading {path}.",
                "tool_calls": [_call(f"call_{n}", "read_file", {"path": path})],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": body})
    messages.append({"role": "assistant", "content": "Discounts are applied in total() now."})
    return messages


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Every corrupted file, one valid session and a folder named like a file."""
    folder = tmp_path_factory.mktemp("corpus")
    for case in CASES:
        path = folder / case.name
        if callable(case.data):
            case.data(path)
        else:
            path.write_bytes(case.data)
    (folder / VALID_NAME).write_text(json.dumps({"messages": _valid_session()}))
    (folder / "a_folder.json").mkdir()  # not a file: a folder scan passes it by
    return folder


# --- tests --------------------------------------------------------------------------------


def test_the_corpus_is_large_and_distinct():
    assert len(CASES) >= 50
    assert len({c.name for c in CASES}) == len(CASES)
    contents = [c.data for c in CASES if isinstance(c.data, bytes)]
    assert len(set(contents)) == len(contents)
    assert {Path(c.name).suffix for c in CASES} == {".json", ".jsonl", ".traj"}


@pytest.mark.parametrize("name", list(SEEDS))
def test_the_seeds_import(tmp_path, name):
    """Each corruption breaks a file that imports: the errors are the corruption's."""
    data, fmt = SEEDS[name]
    path = tmp_path / name
    path.write_bytes(data)
    imported = import_file(path)
    assert imported.format == fmt
    assert imported.warnings == []
    assert len(imported.transcript.messages) >= 4


def _error(path: Path) -> TranscriptError:
    with pytest.raises(TranscriptError) as info:
        import_file(path)
    return info.value


def _assert_one_line(exc: TranscriptError, path: Path, expect: tuple[str, ...]) -> None:
    message = str(exc)
    assert exc.path == str(path)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message and "\r" not in message
    # Bounded (values quoted from the file are cut), never cut before the reason's end.
    assert len(message) < len(str(path)) + 2 + MAX_REASON_CHARS, message
    for part in expect:
        assert part in message, f"{part!r} not in {message!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_corrupted_file_is_one_line_naming_it(corpus, case):
    path = corpus / case.name
    _assert_one_line(_error(path), path, case.expect)


@pytest.mark.parametrize(
    ("name", "expect"), [("a_folder.json", "is a folder"), ("missing.jsonl", "file not found")]
)
def test_a_path_that_is_not_a_file(corpus, name, expect):
    path = corpus / name
    _assert_one_line(_error(path), path, (expect,))


def test_half_a_surrogate_pair_is_mended_not_left_to_fail_the_job(tmp_path):
    """A log cut inside an emoji is valid JSON but cannot be written out as UTF-8."""
    path = tmp_path / "broken_emoji.json"
    messages = _set(CHAT, 1, "content", "fix it \ud83d")
    messages = _set(messages, 3, "content", "\udc80 bad byte")
    path.write_text(json.dumps({"messages": messages}))
    imported = import_file(path)
    assert imported.transcript.messages[1].content == "fix it \ufffd"
    assert imported.transcript.messages[3].content == "\ufffd bad byte"
    assert imported.warnings == [
        "replaced 2 broken character(s) (unpaired UTF-16 surrogates) with U+FFFD, "
        "the first at message 1"
    ]
    imported.transcript.model_dump_json()  # writable: the job's artifacts are JSON


def test_a_line_separator_inside_a_string_is_not_a_line_break(tmp_path):
    """JSON allows U+2028, U+2029 and U+0085 unescaped; only \\n ends a JSON Lines record."""
    path = tmp_path / "separators.jsonl"
    messages = _set(CHAT, 1, "content", "first\u2028second\u2029third\x85fourth")
    path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages))
    imported = import_file(path)
    assert imported.transcript.messages[1].content == "first\u2028second\u2029third\x85fourth"


# The expected parts (here and in test_odd_transcripts.py) that are values quoted from a file.
QUOTED_FROM_FILES = frozenset(
    (
        "'rrrr",
        "'robot'",
        "'narrator'",
        "'model'",
        "'event'",
        "REDACTED",
        "[REDACTED:github_token#1]",
    )
)


def skipped_form(part: str) -> str:
    """An expected part of an error as a skipped file's reason shows it: a value quoted
    from the file (``'robot'``, a placeholder) is elided, the rest is as when named."""
    return "…" if part in QUOTED_FROM_FILES else part


def test_load_transcripts_skips_every_corrupted_file(corpus):
    loaded = load_transcripts(
        FileTranscripts(kind="files", name="files", path=str(corpus), on_error="skip")
    )
    assert [f.path for f in loaded.manifest.files] == [str(corpus / VALID_NAME)]
    assert loaded.transcripts[0].id == "valid_session"
    skipped = {s.path: s.error for s in loaded.manifest.skipped}
    folder = str(corpus / "a_folder.json")  # passed over by name, with why
    assert sorted(skipped) == sorted([folder, *(str(corpus / c.name) for c in CASES)])
    assert skipped[folder].startswith("a folder, not a file")
    for case in CASES:
        reason = skipped[str(corpus / case.name)]
        assert reason and "\n" not in reason
        for part in map(skipped_form, case.expect):
            assert part in reason, (case.name, reason)  # the line number included


def test_the_job_skips_each_corrupted_file_with_one_warning(corpus, tmp_path):
    proc = run_cli([*skip_job(corpus), "tracking=disabled"], tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in output
    warnings = re.findall(r"skipped (\S+): (.*)", output)
    expected = [str(corpus / "a_folder.json"), *(str(corpus / c.name) for c in CASES)]
    assert sorted(path for path, _ in warnings) == sorted(expected)
    assert "Scorecard" in proc.stdout and "overall" in proc.stdout
    points = re.search(r"over (\d+) compaction point", proc.stdout)
    assert points and int(points.group(1)) >= 1, proc.stdout[-2000:]


def skip_job(folder: Path) -> list[str]:
    """Overrides of a job over ``folder`` that skips bad files, with a window that compacts
    the valid session."""
    return [
        "transcript=files",
        f"transcript.path={folder}",
        "transcript.on_error=skip",
        "compaction.context_window=4000",
        "compaction.tail_tokens=500",
        "cache.dir=null",
    ]


def test_on_error_fail_stops_the_job_in_one_line(corpus, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / VALID_NAME).write_bytes((corpus / VALID_NAME).read_bytes())
    bad = folder / "truncated.jsonl"
    bad.write_bytes((corpus / "chat_cut_mid_line_5.jsonl").read_bytes())
    proc = run_cli(
        [
            "transcript=files",
            f"transcript.path={folder}",
            "transcript.on_error=fail",
            "tracking=disabled",
            "cache.dir=null",
        ],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert str(bad) in lines[0] and "line 5" in lines[0] and "invalid JSON" in lines[0]
