"""A call the user rejected (or an approval denied) changed nothing: it is no file change in
the activity read from the log, nor in any probe's question or gold."""

from __future__ import annotations

import pytest
from real_shapes import (
    REJECTED,
    WIN_APP,
    WIN_CONFIG,
    claude_code_windows,
    codex_2026,
    whole_region_probes,
)

from benchmark.activity.actions import extract
from benchmark.activity.declined import declined
from benchmark.activity.files import file_statuses
from benchmark.activity.operations import file_ops
from benchmark.transcript.formats import import_file


@pytest.mark.parametrize(
    "result",
    [
        REJECTED,
        "The user doesn't want to take this action right now. STOP what you are doing.",
        "[Request interrupted by user for tool use]",
        "Permission to use Write has been denied.",
        "exec command rejected by user",
        "patch rejected by user",
        "Error: the command was blocked by hook PreToolUse",
        "approval denied by the user",
        "Rejected: outside the writable roots",
    ],
)
def test_refusals_are_read_by_meaning(result):
    assert declined(result)


@pytest.mark.parametrize(
    "result",
    [
        "The file src/a.py has been updated.",
        "Success. Updated the following files:\nM src/util.py",
        "     1\u2192def check():\n     2\u2192    raise Denied('rejected by user')",
        "Process exited with code 0\nOutput:\n3 passed",
    ],
)
def test_results_that_only_mention_a_refusal_are_not_one(result):
    assert not declined(result)


def _all(path):
    transcript = import_file(path).transcript
    n = len(transcript.messages)
    texts = {i: m.render() for i, m in enumerate(transcript.messages)}
    ops = file_ops(extract(transcript.messages, texts, 0, n), texts)
    return ops, whole_region_probes(transcript)


def _asked_and_gold(probes) -> str:
    return "\n".join(p.question + "\n" + p.gold.answer for p in probes)


def test_a_rejected_claude_code_edit_is_no_change(tmp_path):
    ops, probes = _all(claude_code_windows(tmp_path))
    statuses = file_statuses(ops)
    assert statuses[WIN_APP] == ["read"]  # read, then the edit was rejected
    assert statuses[WIN_CONFIG] == ["modified", "read"]
    said = _asked_and_gold([p for p in probes if p.type == "artifact"])
    assert f"What did we change in `{WIN_APP}`" not in said
    assert "rejected_delay_seconds" not in said
    assert f"What did we change in `{WIN_CONFIG}`" in said
    assert "RETRY_DELAY_SECONDS" in said


def test_a_declined_codex_patch_and_command_are_no_change(tmp_path):
    ops, probes = _all(codex_2026(tmp_path))
    statuses = file_statuses(ops)
    assert "src/app.py" not in statuses and "docs/notes.md" not in statuses
    assert statuses["src/util.py"] == ["modified"]
    said = _asked_and_gold(probes)
    assert "declined_cap_value" not in said and "declined_note_text" not in said
    assert "`src/app.py`" not in said and "docs/notes.md" not in said
    assert "BACKOFF_CEILING_SECONDS" in said
