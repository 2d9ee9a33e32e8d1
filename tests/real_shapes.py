"""Small logs in the real shape of current agents, built in tests (not fixture files: some
are meant to be refused or skipped, and fixtures must all import cleanly).

* ``claude_code_windows``: Claude Code 2.x on Windows, one Edit the user rejected, one
  that went through, paths with backslashes.
* ``codex_2026``: a Codex rollout opening with a long developer prelude (permissions,
  AGENTS.md, environment context), a declined patch and a declined command.
"""

from __future__ import annotations

import json
from pathlib import Path

REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)
WIN_ROOT = "C:\\Users\\me\\proj"
WIN_APP = WIN_ROOT + "\\src\\app.py"
WIN_CONFIG = WIN_ROOT + "\\src\\config.py"
SESSION = "0f3c2a9e-6d1b-4e8a-9c7f-4b2d1e0a5c33"


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class _Claude:
    def __init__(self) -> None:
        self.records: list[dict] = []

    def _event(self, kind: str, message: dict) -> None:
        n = len(self.records)
        self.records.append(
            {
                "parentUuid": f"u{n - 1}" if n else None,
                "isSidechain": False,
                "userType": "external",
                "cwd": WIN_ROOT,
                "sessionId": SESSION,
                "version": "2.0.42",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": f"u{n}",
                "timestamp": f"2026-02-03T10:{n // 60:02d}:{n % 60:02d}.000Z",
            }
        )

    def user(self, text: str) -> None:
        self._event("user", {"role": "user", "content": text})

    def say(self, text: str) -> None:
        n = len(self.records)
        block = {"type": "text", "text": text}
        self._event("assistant", {"id": f"msg_{n}", "role": "assistant", "content": [block]})

    def call(self, call_id: str, name: str, args: dict, result: str, error: bool = False) -> None:
        n = len(self.records)
        block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
        self._event("assistant", {"id": f"msg_{n}", "role": "assistant", "content": [block]})
        answer = {"type": "tool_result", "tool_use_id": call_id, "content": result}
        if error:
            answer["is_error"] = True
        self._event("user", {"role": "user", "content": [answer]})


def claude_code_windows(folder: Path, filler: int = 0) -> Path:
    """The session: read both files, a rejected Edit of app.py, an accepted one of config.py.
    ``filler`` adds that many read-and-note turns before, so the session compacts."""
    log = _Claude()
    log.user("Make the retry delay configurable in src\\config.py and use it in src\\app.py.")
    for n in range(filler):
        log.call(f"toolu_f{n}", "Bash", {"command": f"dir src\\pkg{n}"}, f"module_{n}.py " * 40)
        log.say(f"Package pkg{n} holds module_{n}.py; nothing to change there.")
    log.call(
        "toolu_r1",
        "Read",
        {"file_path": WIN_APP},
        "     1\u2192import time\n     2\u2192def fetch(url):\n     3\u2192    time.sleep(2)\n",
    )
    log.call(
        "toolu_r2",
        "Read",
        {"file_path": WIN_CONFIG},
        '     1\u2192TIMEOUT = 30\n     2\u2192NAME = "svc"\n',
    )
    log.call(
        "toolu_e1",
        "Edit",
        {
            "file_path": WIN_APP,
            "old_string": "    time.sleep(2)",
            "new_string": "    time.sleep(rejected_delay_seconds)",
        },
        REJECTED,
        error=True,
    )
    log.user("[Request interrupted by user for tool use]")
    log.user("Not in app.py yet; only add the setting.")
    log.call(
        "toolu_e2",
        "Edit",
        {
            "file_path": WIN_CONFIG,
            "old_string": "TIMEOUT = 30",
            "new_string": 'TIMEOUT = 30\nRETRY_DELAY_SECONDS = 2  # "seconds"',
        },
        f"The file {WIN_CONFIG} has been updated. Here's the result of running `cat -n`...",
    )
    log.say("Added RETRY_DELAY_SECONDS to config.py; app.py is unchanged as you asked.")
    for n in range(filler):
        log.say(f"Tail note {n}: waiting for the go-ahead on app.py.")
    return _write(folder / f"{SESSION}.jsonl", log.records)


PRELUDE_WORDS = 11_000  # ~15K tokens of instructions before the task, as Codex sends


def _item(payload: dict, n: int) -> dict:
    stamp = f"2026-03-04T08:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    return {"timestamp": stamp, "type": "response_item", "payload": payload}


def _msg(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def codex_2026(folder: Path, filler: int = 0) -> Path:
    """A rollout: long developer prelude, the task, a declined patch of app.py, a declined
    ``cat >`` of notes.md, then an applied patch of util.py."""
    base = " ".join(f"rule{n % 97} applies to every edit." for n in range(PRELUDE_WORDS // 5))
    agents = "# AGENTS.md instructions for /work/repo\n\n<INSTRUCTIONS>\n" + " ".join(
        f"convention{n % 89} keep tests green." for n in range(PRELUDE_WORDS // 10)
    )
    records: list[dict] = [
        {
            "timestamp": "2026-03-04T08:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": "019a8c1e-7b2d-7f00-9e3a-5c4d3b2a1f00",
                "timestamp": "2026-03-04T08:00:00.000Z",
                "cwd": "/work/repo",
                "originator": "codex_cli_rs",
                "cli_version": "0.101.0",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex. " + base},
            },
        },
    ]
    items = [
        _msg(
            "developer",
            "<permissions instructions>approval_policy on-request</permissions instructions>",
        ),
        _msg("user", agents + "\n</INSTRUCTIONS>"),
        _msg(
            "user",
            "<environment_context>\n  <cwd>/work/repo</cwd>\n  <shell>zsh</shell>\n"
            "</environment_context>",
        ),
        _msg("user", "Cap the retry delay in src/app.py and document it."),
    ]
    for n in range(filler):
        call = {"cmd": f"ls src/pkg{n}", "workdir": "/work/repo"}
        items += [
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": f"call_f{n}",
                "arguments": json.dumps(call),
            },
            {
                "type": "function_call_output",
                "call_id": f"call_f{n}",
                "output": "Process exited with code 0\nOutput:\n" + f"mod_{n}.py " * 40,
            },
            _msg("assistant", f"pkg{n} has mod_{n}.py only."),
        ]
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-DELAY = 2\n"
        "+DELAY = min(declined_cap_value, 30)\n*** End Patch\n"
    )
    good = (
        "*** Begin Patch\n*** Update File: src/util.py\n@@\n-LIMIT = 1\n"
        "+BACKOFF_CEILING_SECONDS = 30\n*** End Patch\n"
    )
    items += [
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "call_p1",
            "input": patch,
            "status": "completed",
        },
        {
            "type": "custom_tool_call_output",
            "call_id": "call_p1",
            "output": json.dumps(
                {
                    "output": "patch rejected by user",
                    "metadata": {"exit_code": 1, "duration_seconds": 0.0},
                }
            ),
        },
        {
            "type": "function_call",
            "name": "exec_command",
            "call_id": "call_c1",
            "arguments": json.dumps(
                {
                    "cmd": "cat > docs/notes.md <<'EOF'\ndeclined_note_text\nEOF",
                    "workdir": "/work/repo",
                }
            ),
        },
        {
            "type": "function_call_output",
            "call_id": "call_c1",
            "output": "exec command rejected by user",
        },
        _msg("assistant", "Understood, I will leave app.py and the notes alone."),
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "call_p2",
            "input": good,
            "status": "completed",
        },
        {
            "type": "custom_tool_call_output",
            "call_id": "call_p2",
            "output": "Success. Updated the following files:\nM src/util.py\n",
        },
        _msg("assistant", "util.py now has BACKOFF_CEILING_SECONDS."),
    ]
    for n in range(filler):
        items.append(_msg("assistant", f"Tail note {n}."))
    records += [_item(p, n + 1) for n, p in enumerate(items)]
    name = "rollout-2026-03-04T08-00-00-019a8c1e-7b2d-7f00-9e3a-5c4d3b2a1f00.jsonl"
    return _write(folder / name, records)
