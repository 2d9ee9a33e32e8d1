"""Gold of file and change probes on logs in the real shape of each format: a change is
the code that changed (not a comment beside it), a file a command rewrote is never
"only read", a long read-heavy session is asked about at most of its points, and a
decision's choice is never cut inside a code span."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.activity.shell import shell_ops
from benchmark.probe.config import ProbeConfig
from benchmark.probe.decision import _parse
from benchmark.probe.extract import generate_probes
from benchmark.probe.models import Probe
from benchmark.probe.repeats import FirstAsked
from benchmark.probe.text import balanced, clip
from benchmark.run.compaction import CompactionConfig, CompactionPoint, find_points
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import Transcript


def _probes(transcript: Transcript, head: int = 2, types: tuple[str, ...] = ("artifact",)):
    """Probes of ``types`` about every message after the first ``head``, one kept as tail."""
    n = len(transcript.messages)
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=head, tail_start=n - 1, end=n,
        tokens_before=transcript.total_tokens,
    )  # fmt: skip
    return generate_probes(transcript, point, ProbeConfig(types=list(types), per_type=20))


def _read_only(probes: list[Probe]) -> set[str]:
    return {f.text for p in probes for f in p.gold.facts if f.kind == "read"}


def _changed(probes: list[Probe], path: str) -> list[str]:
    return [
        f.text for p in probes if p.question.startswith("What did we") and path in p.question
        for f in p.gold.facts
    ]  # fmt: skip


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- Claude Code: an Edit whose old and new strings hold a comment line ----------------------

SESSION = "5b0c7e21-3f4a-4c2d-9e8b-1a2b3c4d5e6f"


def _cc(kind: str, content, n: int, **extra) -> dict:
    record = {
        "parentUuid": f"u{n - 1}" if n else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/ledger",
        "sessionId": SESSION,
        "version": "2.0.14",
        "gitBranch": "main",
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": f"u{n}",
        "timestamp": f"2025-11-02T10:{n:02d}:00.000Z",
        **extra,
    }
    if kind == "assistant":
        record["message"] |= {"id": f"msg_{n}", "type": "message", "model": "claude-sonnet-4-5"}
    return record


def _cc_call(n: int, call_id: str, name: str, args: dict, text: str) -> list[dict]:
    return [
        _cc("assistant", [{"type": "text", "text": text}], n),
        _cc("assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": args}], n + 1),
        _cc(
            "user",
            [{"tool_use_id": call_id, "type": "tool_result", "content": "done"}],
            n + 2,
        ),
    ]


LEDGER = "/home/dev/ledger/ledger/totals.py"
OLD = (
    "def total(entries):\n"
    "    # Sum the amounts of every entry, refunds included.\n"
    "    return sum(e.amount for e in entries)\n"
)
NEW = (
    "def total(entries):\n"
    "    # Sum the amounts of every entry, refunds excluded from the settled total.\n"
    "    return sum(e.amount for e in entries if not e.is_refund)\n"
)


def test_a_claude_code_edit_is_credited_to_the_code_not_its_comment(tmp_path):
    records = [
        _cc("user", "Refunds are counted twice in ledger totals; fix total().", 0),
        *_cc_call(1, "toolu_01Read", "Read", {"file_path": LEDGER}, "Reading the totals."),
        *_cc_call(
            4,
            "toolu_01Edit",
            "Edit",
            {"file_path": LEDGER, "old_string": OLD, "new_string": NEW},
            "Excluding refunds in the sum.",
        ),
        _cc("assistant", [{"type": "text", "text": "Done: refunds are excluded."}], 7),
    ]
    transcript = import_file(_write_jsonl(tmp_path / f"{SESSION}.jsonl", records)).transcript
    changed = _changed(_probes(transcript, head=1), "totals.py")
    assert changed, "no change probe"
    assert not any("#" in fact or "refunds excluded" in fact for fact in changed)
    assert any("is_refund" in fact for fact in changed)


# --- Codex: apply_patch, then `git checkout -- file` ------------------------------------------


def _codex(payload: dict, n: int) -> dict:
    return {
        "timestamp": f"2026-01-20T08:{n:02d}:00.000Z",
        "type": "response_item",
        "payload": payload,
    }


def _codex_session(steps: list[tuple[str, str, str | list[str], str]]) -> list[dict]:
    """A 2026 rollout: meta, the task, then (say, tool, input, output) steps."""
    records = [
        {
            "timestamp": "2026-01-20T08:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": "019bd1c4-0000-7000-8000-000000000001",
                "cwd": "/work/app",
                "originator": "codex_cli_rs",
                "cli_version": "0.88.0",
            },
        },  # fmt: skip
        _codex(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Fix the rounding in app/money.py."}],
            },
            1,
        ),  # fmt: skip
    ]
    for n, (say, tool, given, output) in enumerate(steps, start=2):
        call = f"call_{n}"
        records.append(
            _codex({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": say}]}, n)
        )  # fmt: skip
        if tool == "apply_patch":
            records.append(
                _codex({"type": "custom_tool_call", "status": "completed", "call_id": call,
                        "name": "apply_patch", "input": given}, n)
            )  # fmt: skip
            records.append(_codex({"type": "custom_tool_call_output", "call_id": call,
                                   "output": json.dumps({"output": output})}, n))  # fmt: skip
        else:
            args = {"command": ["bash", "-lc", given], "workdir": "/work/app"}
            records.append(
                _codex({"type": "function_call", "name": "shell", "call_id": call,
                        "arguments": json.dumps(args)}, n)
            )  # fmt: skip
            records.append(_codex({"type": "function_call_output", "call_id": call,
                                   "output": output}, n))  # fmt: skip
    return records


PATCH = (
    "*** Begin Patch\n*** Update File: app/money.py\n@@ def to_cents(amount):\n"
    "-    # Round half up to whole cents.\n"
    "-    return int(amount * 100)\n"
    "+    # Round half up to whole cents (Decimal, not float).\n"
    "+    return int((Decimal(amount) * 100).quantize(ONE, rounding=ROUND_HALF_UP))\n"
    "*** End Patch\n"
)


def test_a_codex_patch_gives_its_code_and_a_checked_out_file_is_not_read_only(tmp_path):
    records = _codex_session(
        [
            ("Reading the money helpers.", "shell", "cat app/money.py", "def to_cents(amount):"),
            ("Reading the config.", "shell", "cat app/config.py", "ROUNDING = 'half-up'"),
            ("Reading the tests.", "shell", "sed -n 1,40p tests/test_money.py", "def test_x():"),
            ("Rounding with Decimal.", "apply_patch", PATCH, "Success. Updated app/money.py"),
            ("Undoing my config experiment.", "shell", "git checkout -- app/config.py", ""),
            ("Running the tests.", "shell", "pytest -q tests/test_money.py", "1 passed"),
        ]
    )
    path = _write_jsonl(tmp_path / "rollout-2026-01-20T08-00-00-019bd1c4.jsonl", records)
    transcript = import_file(path).transcript
    probes = _probes(transcript)
    read = _read_only(probes)
    assert "tests/test_money.py" in read
    assert "app/config.py" not in read  # `git checkout --` rewrote it
    changed = _changed(probes, "app/money.py")
    assert changed and not any("#" in fact for fact in changed)
    assert any("Decimal" in fact or "ROUND_HALF_UP" in fact for fact in changed)


# --- mini-swe-agent v2: `sed -i` and an inline Python script --------------------------------


def _mini(steps: list[tuple[str, str, str]]) -> dict:
    messages = [
        {"role": "system", "content": "You are a careful assistant working in a Linux shell."},
        {"role": "user", "content": [{"type": "text", "text": "Please solve this issue: "
                                      "the parser drops the last field."}]},
    ]  # fmt: skip
    for n, (say, command, output) in enumerate(steps):
        call = f"call_{n:02d}"
        messages.append(
            {"role": "assistant", "content": say,
             "tool_calls": [{"id": call, "type": "function", "function": {
                 "name": "bash", "arguments": json.dumps({"command": command})}}],
             "extra": {"timestamp": 1767225600.0 + n}}
        )  # fmt: skip
        messages.append(
            {"role": "tool", "tool_call_id": call,
             "content": f"<returncode>0</returncode>\n<output>\n{output}\n</output>",
             "extra": {"returncode": 0}}
        )  # fmt: skip
    return {
        "info": {"mini_version": "2.0.0", "exit_status": "Submitted", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
    }


SCRIPT = (
    "cd /srv/csvkit && python - <<'EOF'\n"
    "text = open('csvkit/fields.py').read()\n"
    "with open('csvkit/fields.py', 'w') as f:\n"
    "    f.write(text.replace('[:-1]', ''))\n"
    "EOF"
)


def test_mini_swe_agent_sed_and_inline_python_make_files_modified(tmp_path):
    steps = [
        ("Reading the parser.", "cd /srv/csvkit && cat csvkit/parser.py", "def parse(line):"),
        ("Reading the fields.", "cd /srv/csvkit && cat csvkit/fields.py", "def split(x):"),
        ("Reading the docs.", "cd /srv/csvkit && cat docs/usage.rst", "Usage"),
        ("Fixing the slice.", "cd /srv/csvkit && sed -i 's/fields\\[:-1\\]/fields/' "
         "csvkit/parser.py", ""),
        ("Fixing fields too.", SCRIPT, ""),
        ("Testing.", "cd /srv/csvkit && python -m pytest -q", "3 passed"),
    ]  # fmt: skip
    path = tmp_path / "csvkit-12.traj.json"
    path.write_text(json.dumps(_mini(steps)))
    imported = import_file(path)
    assert imported.format == "mini_swe_agent"
    probes = _probes(imported.transcript)
    read = _read_only(probes)
    assert "docs/usage.rst" in read
    assert not read & {"csvkit/parser.py", "csvkit/fields.py"}
    modified = {f.text for p in probes for f in p.gold.facts if f.kind == "modified"}
    assert {"csvkit/parser.py", "csvkit/fields.py"} <= modified


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git checkout -- src/a.py", [("edit", "src/a.py")]),
        ("git checkout HEAD~1 src/a.py", [("edit", "src/a.py")]),
        ("git checkout fix/parser", []),  # a branch, no file
        ("git restore src/a.py", [("edit", "src/a.py")]),
        ("git restore --staged src/a.py", []),  # the index only
        ("perl -pi -e 's/foo/bar/g' lib/x.pm", [("edit", "lib/x.pm")]),
        ("python3 -c \"open('out.txt', 'w').write('x')\"", [("write", "out.txt")]),
        ("black src/a.py", [("unsure", "src/a.py")]),
        ("black --check src/a.py", []),
        ("python tools/fix_imports.py src/a.py", [("unsure", "src/a.py")]),
        ("python reproduce.py", []),
    ],
)
def test_shell_commands_that_rewrite_files(command, expected):
    assert [(kind, path) for kind, path, *_ in shell_ops(command)] == expected


def test_a_script_the_session_wrote_and_ran_changes_its_files(tmp_path):
    script = "p = 'csvkit/fields.py'\nt = open('csvkit/fields.py').read()\n" + (
        "open('csvkit/fields.py', 'w').write(t.replace('a', 'b'))\n"
    )
    steps = [
        ("Reading the fields.", "cd /srv/csvkit && cat csvkit/fields.py", "def split(x):"),
        ("Reading the docs.", "cd /srv/csvkit && cat docs/usage.rst", "Usage"),
        ("Writing a fix script.", f"cat > fix.py <<'EOF'\n{script}EOF", ""),
        ("Running it.", "cd /srv/csvkit && python fix.py", ""),
    ]
    path = tmp_path / "csvkit-13.traj.json"
    path.write_text(json.dumps(_mini(steps)))
    read = _read_only(_probes(import_file(path).transcript))
    assert "docs/usage.rst" in read and "csvkit/fields.py" not in read


# --- a long read-heavy session ----------------------------------------------------------------


def _read_heavy(files: int = 60, reads: int = 220) -> Transcript:
    """A mini-swe-agent v2 log reading ``files`` files ``reads`` times, editing two."""
    steps = []
    for n in range(reads):
        name = f"pkg/module_{n % files:02d}.py"
        body = "\n".join(f"def helper_{n}_{k}(x):\n    return x + {k}" for k in range(12))
        steps.append((f"Reading {name} again.", f"cat {name}", body))
        if n in (40, 150):
            steps.append(("Fixing it.", f"sed -i 's/x + 1/x + 2/' {name}", ""))
    return Transcript.model_validate(
        {
            "id": "read-heavy",
            "source": "test",
            "messages": _mini_messages(_mini(steps)),
        }
    )


def _mini_messages(traj: dict) -> list[dict]:
    out = []
    for m in traj["messages"]:
        content = m["content"]
        if isinstance(content, list):
            content = content[0]["text"]
        out.append({k: v for k, v in {**m, "content": content}.items() if k != "extra"})
    return out


def test_a_long_read_heavy_session_is_asked_about_at_most_points():
    transcript = _read_heavy()
    config = CompactionConfig(
        context_window=transcript.total_tokens // 10, trigger_ratio=0.9, tail_tokens=400
    )
    points = find_points(transcript, config)
    assert len(points) >= 6
    first = FirstAsked()
    asked = [
        first(generate_probes(transcript, p, ProbeConfig(types=["artifact"], per_type=4)))
        for p in points
    ]
    with_probes = sum(1 for probes in asked if probes)
    assert with_probes >= 0.75 * len(points), (with_probes, len(points))
    # Each point asks about the files its own latest work read.
    last_reads = [sorted(_read_only(probes)) for probes in asked if _read_only(probes)]
    assert len({tuple(r) for r in last_reads}) == len(last_reads)


# --- decisions and clipping -----------------------------------------------------------------


def test_clip_never_cuts_inside_a_code_span_or_bracket():
    text = (
        "after reading the ledger module we use "
        "`normalize_entries(entries, drop_refunds=True)` in it rather than a loop"
    )
    for limit in range(40, len(text)):
        clipped = clip(text, limit)
        assert text.startswith(clipped) and balanced(clipped), (limit, clipped)


def test_a_decision_whose_clause_cue_sits_in_code_keeps_the_span_whole():
    sentence = (
        "I decided to call `retry(times=3, since=started)` rather than a bare loop because "
        "it resets the clock."
    )
    choice, why, rejected = _parse(sentence, "", "", sentence)
    assert choice == "call `retry(times=3, since=started)`"
    assert why == "it resets the clock" and rejected == ("a bare loop",)


def test_a_long_code_choice_is_never_gold_cut_open():
    code = "`" + "build_index(" + ", ".join(f"field_{k}" for k in range(40)) + ")`"
    sentence = f"I decided to use {code} because the old index missed fields."
    found = _parse(sentence, "", "", sentence)
    assert found is None or balanced(found[0])


def test_a_comment_counts_only_when_no_code_changed_and_a_heading_is_no_comment():
    from benchmark.probe.artifact import change_tokens

    old = "x = 1\n# keep x small\n"
    assert change_tokens("x = 1\n# keep x below ten\n", old) == ["# keep x below ten"]
    assert change_tokens("x = 2  # keep x small\n# keep x below ten\n", old) == ["x = 2"]
    readme = "## Cursor pagination\nOn by default.\n"
    assert change_tokens(readme, "", code=False)[0] == "## Cursor pagination"
