"""Gold rules that hold on real sessions: errors only from failed calls, a background job's
start is no output, multi-line commands named by a distinguishing line, backups are no
subject of decisions, summaries of work done give no next step, errors kept whole."""

from __future__ import annotations

import json

from conftest import call_message, result_message
from conftest import say as _say
from test_probe_gold import _probes

from benchmark.activity.actions import Action
from benchmark.activity.files import is_generated
from benchmark.probe.runs import call_error, error_lines, exit_status


def _call(call_id: str, name: str, args: dict, output: str) -> list[dict]:
    return [call_message(call_id, name, args), result_message(call_id, output)]


def _facts(probes) -> list[str]:
    return [f.text for p in probes for f in p.gold.facts]


APT_OK = (
    "Setting up postgresql-17 (17.2-1) ...\n"
    "hunspell: error: dictionary /usr/share/hunspell/en_US.aff: No such file or directory\n"
    "Processing triggers for libc-bin (2.39-0ubuntu8) ...\n"
    "Exit code: 0"
)


def test_exit_status_shapes():
    assert exit_status("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nboom") == 1
    assert exit_status("<returncode>2</returncode>\n<output>x</output>") == 2
    assert exit_status("make: *** [all] Error 2\nexit status 2") == 2
    assert exit_status("Exit code 0") == 0
    assert exit_status("all fine") is None


def test_a_warning_from_a_call_that_succeeded_is_no_error():
    region = _call("c1", "Bash", {"command": "sudo apt install -y postgresql-17"}, APT_OK)
    assert not [p for p in _probes(region, "recall") if "error" in p.question.lower()]


def test_a_failed_call_gives_its_error():
    out = "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nerror: could not lock config file"
    probes = _probes(_call("c1", "exec_command", {"cmd": "git config x y"}, out), "recall")
    assert "error: could not lock config file" in _facts(probes)


def test_a_sub_agent_report_mentioning_errors_is_no_error():
    report = (
        "## Findings\n\nThe module raised `ImportError: cannot import name 'x'` earlier, "
        "but it is fixed now.\nError: none remaining."
    )
    region = _call("t1", "Task", {"prompt": "check imports"}, report)
    assert not [p for p in _probes(region, "recall") if "error" in p.question.lower()]
    assert call_error(
        Action(0, "Task", {}, None, 1, "<tool_use_error>File not found</tool_use_error>")
    )


def test_a_background_start_notice_is_not_output():
    edit = _call(
        "e1", "Write", {"file_path": "monitor-build.sh", "content": "make\n"}, "Wrote file"
    )
    run = _call(
        "b1",
        "Bash",
        {"command": "./monitor-build.sh"},
        "Command running in background with ID: bash_1",
    )
    probes = _probes(edit + run, "recall")
    assert not any("bash_1" in fact for fact in _facts(probes))


def test_a_multi_line_command_is_named_by_its_distinguishing_line():
    region = []
    for n, name in enumerate(["os", "sys", "json", "missing_mod"]):
        out = (
            "Traceback (most recent call last):\nImportError: no module"
            if name == "missing_mod"
            else "ok"
        )
        cmd = f'cd /testbed && python -c "\nimport {name}\nprint({name})\n"'
        region += _call(f"m{n}", "bash", {"command": cmd}, out)
    probes = [p for p in _probes(region, "recall") if p.question.startswith("Which command")]
    assert _facts(probes) == ["print(missing_mod)"]  # its own code, past the shared imports
    errors = [p for p in _probes(region, "recall") if p.question.startswith("What exact error")]
    assert [p.question for p in errors] == [
        "What exact error did the `python` script containing `print(missing_mod)` fail with?"
    ]


def test_backup_files_are_no_subject_of_decisions():
    for path in (
        "config.py.backup",
        "a.bak",
        "x.orig",
        "y.rej",
        "z~",
        "build/lib/a.py",
        "dist/a.js",
        "src/__pycache__/a.pyc",
        "node_modules/x/index.js",
    ):
        assert is_generated(path), path
    assert not is_generated("src/builder.py") and not is_generated("config.py")
    args = {"path": "config.py.backup", "old_str": "a", "new_str": "b"}
    call = {
        "id": "w1",
        "type": "function",
        "function": {"name": "edit", "arguments": json.dumps(args)},
    }
    region = [
        {
            "role": "assistant",
            "content": "The timeout is too short. Let's raise the timeout to 30 seconds.",
            "tool_calls": [call],
        },
        {"role": "tool", "tool_call_id": "w1", "content": "Edited."},
    ]
    assert not [p for p in _probes(region, "decision") if "config.py.backup" in p.question]


def test_a_summary_of_work_done_gives_no_next_step():
    summary = (
        "Summary:\n- Then updated the parser to accept week dates.\n- Added tests for it.\n\n"
        "Changes made:\n- Next, handled the empty input case.\n"
    )
    edit = _call("e1", "Write", {"file_path": "parser.py", "content": "x = 1\n"}, "Wrote file")
    probes = _probes(edit + [_say(summary)], "continuation")
    facts = _facts(probes)
    assert not any(
        "updated the parser" in f or "empty input" in f or "Added tests" in f for f in facts
    )
    later = summary + "\nNext steps:\n- [ ] Document the week date format in README.md\n"
    facts = _facts(_probes(edit + [_say(later)], "continuation"))
    assert "Document the week date format in README.md" in facts


def test_an_error_is_kept_whole_past_its_colon():
    out = (
        "Exit code: 1\nOutput:\n"
        "ERROR: Could not install packages due to the following issue:\n"
        "Permission denied: '/usr/lib/python3/dist-packages/x'\n\nmore"
    )
    (err,) = [e for e in error_lines(out) if e.text.startswith("ERROR")]
    assert err.text.endswith("Permission denied: '/usr/lib/python3/dist-packages/x'")
    probes = _probes(_call("p1", "shell", {"command": "pip install x"}, out), "recall")
    assert err.text in _facts(probes)
