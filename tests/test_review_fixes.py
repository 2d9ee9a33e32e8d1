"""Gold faults the issue-27 hand review found: a command every line of which a later,
different command holds (SWE-agent's retried ``edit 287:295``) was asked about by a name
the others share; a scaffold's ``THOUGHT:`` label was quoted as part of a rationale."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import call_message, result_message
from real_shapes import whole_region_probes

from benchmark.transcript.formats import import_file

BODY = "    if 'PixelData' in ds:\n        required.append('PixelRepresentation')\n"
EDITS = [  # (command, the error it failed with); the first's lines are all in the second
    ("edit 287:295\n" + BODY, "E999 SyntaxError: unmatched ']'"),
    ("edit 287:295\n    required = [\n" + BODY, "E999 SyntaxError: unmatched ')'"),
    ("edit 287:295\n    required = [\n    ]\n" + BODY, "E999 SyntaxError: invalid syntax"),
]


def _chat_log(tmp_path: Path) -> Path:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Do not require PixelRepresentation for float pixel data."},
    ]
    for n, (command, error) in enumerate(EDITS):
        messages.append(call_message(f"call_{n}", "bash", {"command": command}))
        result = f"Your proposed edit has introduced new syntax error(s).\nERRORS:\n- {error}\n"
        messages.append(result_message(f"call_{n}", result))
    messages.append({"role": "assistant", "content": "I will retry with the whole block."})
    path = tmp_path / "retries.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


def test_commands_sharing_every_quote_are_told_apart_by_their_order(tmp_path: Path) -> None:
    probes = whole_region_probes(import_file(_chat_log(tmp_path)).transcript)
    asked = {
        p.question: " ".join(f.text for f in p.gold.facts)
        for p in probes
        if p.question.startswith("What exact error did")
    }
    assert len(asked) == len(EDITS), asked
    for question, gold in asked.items():
        # each question names one command, and its gold is that command's own error
        matches = [error for _, error in EDITS if error.split("SyntaxError: ")[1] in gold]
        assert len(matches) == 1, (question, gold)
    first = next(q for q, g in asked.items() if "unmatched ']'" in g)
    assert "the first of the" in first and "`edit 287:295`" in first


def test_a_scaffold_label_is_not_part_of_a_rationale(tmp_path: Path) -> None:
    steps = [
        {"role": "system", "content": "You work in a shell."},
        {"role": "user", "content": "reserve() lets stock go below zero; fix it."},
        {
            "role": "assistant",
            "content": "THOUGHT: The subtraction never checks what is on hand. I will make "
            "reserve refuse a quantity larger than the stock, raising OutOfStock before "
            "anything changes.\n\n```bash\nsed -i 's/- qty/- min(qty, have)/' depot/stock.py\n```",
        },
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        {"role": "assistant", "content": "THOUGHT: Done."},
    ]
    path = tmp_path / "mini.traj.json"
    path.write_text(json.dumps({"messages": steps, "info": {"exit_status": "Submitted"}}))
    probes = whole_region_probes(import_file(path).transcript)
    facts = [f.text for p in probes if p.type == "decision" for f in p.gold.facts]
    assert facts, [p.question for p in probes]
    assert all(not f.startswith("THOUGHT") for f in facts), facts


def test_a_change_followed_by_a_new_request_is_not_in_progress(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the crash on empty accounts and add a test."},
        call_message("c1", "write_file", {"path": "tests/test_empty.py", "content": "x = 1\n"}),
        result_message("c1", "Wrote tests/test_empty.py (1 line)."),
        call_message("c2", "bash", {"command": "python -m pytest tests -q"}),
        result_message("c2", "3 passed in 0.3s"),
        {"role": "user", "content": "Good. Please also document the empty date column."},
        call_message("c3", "read_file", {"path": "docs/export.md"}, "Reading the docs first."),
        result_message("c3", "# Export\n"),
        {"role": "assistant", "content": "Next I document it."},
    ]
    path = tmp_path / "moved_on.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    probes = whole_region_probes(import_file(path).transcript)
    asked = [p.question for p in probes]
    assert not any("middle of changing" in q for q in asked), asked
    # without the new request, the same change is the one in progress
    del messages[6]
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    probes = whole_region_probes(import_file(path).transcript)
    current = [p for p in probes if "middle of changing" in p.question]
    assert [f.text for f in current[0].gold.facts][0] == "tests/test_empty.py"
