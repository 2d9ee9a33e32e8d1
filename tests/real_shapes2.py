"""Round-2 logs in the on-disk shapes of current agents, written for the issue-27 review
(checked against the tools' public docs and code, not fixtures): each is a whole session
with reads, edits, failing and passing commands, a decision and a rejected or interrupted step.

* ``claude_project``: a folder as copied from ``~/.claude/projects/<slug>/``: a 2.x session
  (summary, snapshot, queue and progress lines, thinking, a hook's reminder, Grep/Read/Bash/
  Edit/MultiEdit/NotebookEdit/TodoWrite/Task calls with ``toolUseResult``, an image result,
  a rejected Edit, an interruption, a ``compact_boundary`` and the ``isCompactSummary``
  Claude Code wrote), its ``<session>/subagents/agent-*.jsonl`` + ``.meta.json``,
  ``<session>/tool-results/*.txt``, ``sessions-index.json`` and a 2.0-style root
  ``agent-*.jsonl``. ``windows=True`` writes the same session from ``C:\\Users\\...``.
* ``codex_rollout``: a Codex CLI 2026 rollout (``session_meta`` with base instructions,
  ``turn_context``, ``event_msg`` token counts and agent messages, encrypted ``reasoning``,
  ``exec_command``/``write_stdin``, ``apply_patch`` as a custom tool, ``local_shell_call``,
  ``update_plan``, a ``ghost_snapshot`` and a ``compacted`` item); ``prelude_words`` adds a
  developer-instructions prelude of that size.
* ``mini_v2``: a mini-swe-agent v2 ``.traj.json`` (tool calls of ``bash``, ``extra``, exit).
* ``swe_agent_demo``: a SWE-agent 1.x function-calling ``.traj`` with a demonstration put in
  its history (``is_demo`` entries, tool calls and results of their own) before the task.
"""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "7c1d9e42-3b8a-4f0e-a6d2-19e0c4b7f5a1"
AGENT = "a3f9c21"
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)
READ_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it looks "
    "malicious. If it does, you MUST refuse to improve or augment the code.\n</system-reminder>\n"
)
EXPORT_OLD = "        if row.amount <= 0:\n            continue  # skip refunds"
EXPORT_NEW = "        if row.amount == 0:\n            continue  # zero rows carry nothing"


def _dump(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class ClaudeLog:
    """Claude Code 2.x events: the envelope every conversation line carries, one line per
    content block of an API message (lines of one message share ``message.id``)."""

    def __init__(self, cwd: str, sep: str = "/", agent: str | None = None) -> None:
        self.cwd, self.sep, self.agent = cwd, sep, agent
        self.records: list[dict] = []
        self._n = 0

    def path(self, *parts: str) -> str:
        return self.sep.join([self.cwd, *parts])

    def _envelope(self, kind: str, **fields: object) -> dict:
        self._n += 1
        n = self._n
        parent = next((r["uuid"] for r in reversed(self.records) if "uuid" in r), None)
        record = {
            "parentUuid": parent,
            "isSidechain": self.agent is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": SESSION,
            "version": "2.1.31",
            "gitBranch": "fix/negative-rows",
            "type": kind,
            "uuid": f"{'s' if self.agent else 'm'}{n:04d}-e5b1-4c7a-9d21-0f4e8a6b3c2d",
            "timestamp": f"2026-04-14T09:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z",
        }
        if self.agent:
            record["agentId"] = self.agent
        else:
            record["slug"] = "quiet-amber-ledger"
        record.update(fields)
        self.records.append(record)
        return record

    def raw(self, record: dict) -> None:
        self.records.append(record)

    def user(self, content: object, **extra: object) -> None:
        self._envelope("user", message={"role": "user", "content": content}, **extra)

    def blocks(self, *blocks: dict) -> None:
        """One API message of several content blocks: one line per block."""
        mid = f"msg_01{len(self.records):04d}Xk"
        for n, block in enumerate(blocks):
            last = n == len(blocks) - 1
            stop = ("tool_use" if block["type"] == "tool_use" else "end_turn") if last else None
            self._envelope(
                "assistant",
                message={
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-5-20251101",
                    "content": [block],
                    "stop_reason": stop,
                    "usage": {"input_tokens": 4, "output_tokens": 60},
                },
                requestId=f"req_011C{len(self.records):05d}",
            )

    def say(self, text: str, thinking: str | None = None) -> None:
        blocks = [{"type": "text", "text": text}]
        if thinking:
            blocks.insert(0, {"type": "thinking", "thinking": thinking, "signature": "EqQB"})
        self.blocks(*blocks)

    def call(
        self,
        call_id: str,
        name: str,
        args: dict,
        result: object,
        structured: object = None,
        error: bool = False,
        text: str | None = None,
        thinking: str | None = None,
    ) -> None:
        blocks: list[dict] = [{"type": "tool_use", "id": call_id, "name": name, "input": args}]
        if text:
            blocks.insert(0, {"type": "text", "text": text})
        if thinking:
            blocks.insert(0, {"type": "thinking", "thinking": thinking, "signature": "EqQB"})
        self.blocks(*blocks)
        answer: dict = {"type": "tool_result", "tool_use_id": call_id, "content": result}
        if error:
            answer["is_error"] = True
        extra = {"toolUseResult": structured} if structured is not None else {}
        source = self.records[-1]["uuid"]
        self.user([answer], sourceToolAssistantUUID=source, **extra)

    def progress(self, call_id: str, output: str) -> None:
        self._envelope(
            "progress",
            data={"type": "bash_progress", "output": output, "elapsedTimeSeconds": 3},
            toolUseID=f"bash-progress-{call_id}",
            parentToolUseID=call_id,
        )

    def system(self, subtype: str, content: str, **extra: object) -> None:
        self._envelope("system", subtype=subtype, content=content, level="info", **extra)


def _bash_result(stdout: str, stderr: str = "") -> dict:
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}


def _read_result(path: str, lines: list[str], start: int = 1) -> tuple[str, dict]:
    shown = "".join(f"{start + n:6d}\u2192{line}\n" for n, line in enumerate(lines))
    structured = {
        "type": "text",
        "file": {
            "filePath": path,
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": start,
            "totalLines": len(lines) + start - 1,
        },
    }
    return shown + READ_REMINDER, structured


def claude_session(root: str, sep: str, filler: int = 0) -> ClaudeLog:
    """The main session: fix negative rows dropped by the CSV export, then add a header."""
    log = ClaudeLog(root, sep)
    export, test = log.path("src", "ledger", "export.py"), log.path("tests", "test_export.py")
    log.raw({"type": "summary", "summary": "CSV export keeps refunds", "leafUuid": "m0040"})
    log.raw(
        {
            "type": "file-history-snapshot",
            "messageId": "m0001",
            "snapshot": {"messageId": "m0001", "trackedFileBackups": {}, "timestamp": "t"},
            "isSnapshotUpdate": False,
        }
    )
    log.raw(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": "2026-04-14T09:00:00.100Z",
            "sessionId": SESSION,
            "content": "also keep the old column order",
        }
    )
    log.user(
        "<system-reminder>\nSessionStart:startup hook success: loaded .claude/ledger-notes.md "
        "(amounts are Decimal, never float)\n</system-reminder>",
        isMeta=True,
    )
    log.user(
        "The CSV export drops refund rows (negative amounts). Fix it in src/ledger/export.py "
        "and add a test.",
        permissionMode="default",
        todos=[],
    )
    log.call(
        "toolu_01Grep1",
        "Grep",
        {"pattern": "amount <= 0", "path": log.path("src"), "output_mode": "content", "-n": True},
        f"{export}:42:        if row.amount <= 0:",
        {"mode": "content", "numFiles": 1, "filenames": [export], "numLines": 1},
        thinking="The drop is probably a filter on the amount. Search for it first.",
        text="I'll find where rows are filtered.",
    )
    source = [
        "import csv",
        "",
        "def export_rows(rows, out):",
        "    writer = csv.writer(out)",
        "    for row in rows:",
        EXPORT_OLD.split("\n")[0],
        EXPORT_OLD.split("\n")[1],
        "        writer.writerow([row.date, row.payee, row.amount])",
    ]
    shown, structured = _read_result(export, source, 37)
    log.call(
        "toolu_01Read1", "Read", {"file_path": export, "offset": 37, "limit": 8}, shown, structured
    )
    for n in range(filler):
        page = log.path("src", "ledger", f"report_{n}.py")
        shown, structured = _read_result(
            page, [f"def report_{n}(rows):", f"    return len(rows) + {n}"]
        )
        log.call(f"toolu_01Fill{n}", "Read", {"file_path": page}, shown, structured)
        log.say(f"report_{n}.py only counts rows; it does not filter amounts.")
    failing = (
        "Exit code 1\n"
        "F.                                                                       [100%]\n"
        "FAILED tests/test_export.py::test_refund_rows_kept - AssertionError: assert 2 == 3\n"
        "1 failed, 1 passed in 0.08s"
    )
    log.call(
        "toolu_01Bash1",
        "Bash",
        {"command": "python -m pytest tests/test_export.py -q", "description": "Run export tests"},
        failing,
        "Error: " + failing,
        error=True,
    )
    log.progress("toolu_01Bash1", "F.")
    log.call(
        "toolu_01Task1",
        "Task",
        {
            "description": "Find other amount filters",
            "prompt": "Search the repo for other places that skip rows by amount sign.",
            "subagent_type": "Explore",
        },
        [{"type": "text", "text": "Only src/ledger/export.py line 42 filters by sign."}],
        {
            "status": "completed",
            "agentId": AGENT,
            "content": [
                {"type": "text", "text": "Only src/ledger/export.py line 42 filters by sign."}
            ],
            "totalDurationMs": 9120,
            "totalTokens": 14210,
            "totalToolUseCount": 3,
        },
    )
    log.call(
        "toolu_01Edit1",
        "Edit",
        {"file_path": export, "old_string": EXPORT_OLD, "new_string": "        pass"},
        REJECTED,
        "Error: The user doesn't want to proceed with this tool use.",
        error=True,
        text="I'll drop the filter.",
    )
    log.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    log.user("Don't drop the check entirely: zero rows must still be skipped, refunds kept.")
    log.call(
        "toolu_01Edit2",
        "Edit",
        {"file_path": export, "old_string": EXPORT_OLD, "new_string": EXPORT_NEW},
        f"The file {export} has been updated. Here's the result of running `cat -n` on a "
        f"snippet of the edited file:\n    42\u2192        if row.amount == 0:\n"
        "    43\u2192            continue  # zero rows carry nothing",
        {
            "filePath": export,
            "oldString": EXPORT_OLD,
            "newString": EXPORT_NEW,
            "originalFile": "\n".join(source),
            "structuredPatch": [
                {
                    "oldStart": 42,
                    "oldLines": 2,
                    "newStart": 42,
                    "newLines": 2,
                    "lines": [
                        "-        if row.amount <= 0:",
                        "-            continue  # skip refunds",
                        "+        if row.amount == 0:",
                        "+            continue  # zero rows carry nothing",
                    ],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
        text="Keeping zero rows out, refunds in: the test is `amount == 0`, not `<= 0`.",
    )
    log.call(
        "toolu_01Multi1",
        "MultiEdit",
        {
            "file_path": test,
            "edits": [
                {"old_string": "ROWS = [A, B]", "new_string": "ROWS = [A, B, REFUND]"},
                {"old_string": "assert count == 2", "new_string": "assert count == 3"},
            ],
        },
        f'Applied 2 edits to {test}:\n1. Replaced "ROWS = [A, B]" with "ROWS = [A, B, REFUND]"\n'
        '2. Replaced "assert count == 2" with "assert count == 3"',
        {"filePath": test, "edits": [], "originalFileContents": "", "structuredPatch": []},
    )
    notebook = log.path("notebooks", "refunds.ipynb")
    log.call(
        "toolu_01Nb1",
        "NotebookEdit",
        {
            "notebook_path": notebook,
            "cell_id": "c7f2a9",
            "new_source": "df[df.amount < 0].head()",
            "edit_mode": "replace",
        },
        "Updated cell c7f2a9 with df[df.amount < 0].head()",
        {"new_source": "df[df.amount < 0].head()", "cell_id": "c7f2a9", "edit_mode": "replace"},
    )
    log.call(
        "toolu_01Todo1",
        "TodoWrite",
        {
            "todos": [
                {"content": "Keep refund rows", "status": "completed", "activeForm": "Keeping"},
                {"content": "Add header row", "status": "pending", "activeForm": "Adding"},
            ]
        },
        "Todos have been modified successfully. Ensure that you continue to use the todo list "
        "to track your progress. Please proceed with the current tasks if applicable",
        {"oldTodos": [], "newTodos": []},
    )
    png = log.path("docs", "refunds.png")
    log.call(
        "toolu_01Img1",
        "Read",
        {"file_path": png},
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            }
        ],
        {
            "type": "image",
            "file": {"base64": "iVBORw0KGgo=", "type": "image/png", "originalSize": 2048},
        },
    )
    log.call(
        "toolu_01Bash2",
        "Bash",
        {"command": "python -m pytest tests/test_export.py -q", "description": "Run export tests"},
        "..                                                                       [100%]\n"
        "2 passed in 0.05s",
        _bash_result("2 passed in 0.05s"),
    )
    log.say("Refund rows are exported now and the test covers them.")
    log.system(
        "compact_boundary",
        "Conversation compacted",
        compactMetadata={"trigger": "manual", "preTokens": 48213},
        logicalParentUuid=log.records[-1]["uuid"],
    )
    log.user(
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below:\nAnalysis: fixed export filter, tests pass.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    log.user("Now write a header row first, and restore src/ledger/legacy.py; I broke it.")
    log.call(
        "toolu_01Bash3",
        "Bash",
        {"command": "git checkout -- src/ledger/legacy.py && git status --short"},
        " M src/ledger/export.py\n M tests/test_export.py",
        _bash_result(" M src/ledger/export.py\n M tests/test_export.py"),
    )
    log.call(
        "toolu_01Edit3",
        "Edit",
        {
            "file_path": export,
            "old_string": "    writer = csv.writer(out)",
            "new_string": "    writer = csv.writer(out)\n    writer.writerow(HEADER)",
        },
        f"The file {export} has been updated.",
        {"filePath": export, "structuredPatch": [], "userModified": False},
    )
    log.say("Header written first; legacy.py restored from git.")
    log.user([{"type": "text", "text": "[Request interrupted by user]"}])
    log.system("turn_duration", "", durationMs=81234)
    return log


def subagent_log(root: str, sep: str) -> ClaudeLog:
    """The Explore sub-agent's own conversation (every line ``isSidechain``)."""
    log = ClaudeLog(root, sep, agent=AGENT)
    log.user("Search the repo for other places that skip rows by amount sign.")
    log.call(
        "toolu_01SubGrep",
        "Grep",
        {"pattern": "amount\\s*[<>]=?\\s*0", "path": log.path("src")},
        "Found 1 file\n" + log.path("src", "ledger", "export.py"),
        {"mode": "files_with_matches", "filenames": [], "numFiles": 1},
    )
    log.say("Only src/ledger/export.py line 42 filters by sign.")
    return log


def claude_project(folder: Path, windows: bool = False, filler: int = 0) -> Path:
    """A project folder as copied from ``~/.claude/projects``; returns the folder."""
    root, sep = (
        ("C:\\Users\\dana\\src\\ledger", "\\") if windows else ("/Users/dana/src/ledger", "/")
    )
    slug = "C--Users-dana-src-ledger" if windows else "-Users-dana-src-ledger"
    project = folder / slug
    _dump(project / f"{SESSION}.jsonl", claude_session(root, sep, filler).records)
    sub = project / SESSION / "subagents"
    _dump(sub / f"agent-{AGENT}.jsonl", subagent_log(root, sep).records)
    meta = {"agentType": "Explore", "spawnDepth": 1, "model": "claude-haiku-4-5-20251001"}
    (sub / f"agent-{AGENT}.meta.json").write_text(json.dumps(meta))
    results = project / SESSION / "tool-results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "toolu_01Bash1.txt").write_text(
        "F.\nFAILED tests/test_export.py::test_refund_rows_kept\n"
    )
    memory = project / SESSION / "session-memory"
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "summary.md").write_text("# Session memory\nRefunds are negative amounts.\n")
    index = {
        "version": 1,
        "entries": [
            {
                "sessionId": SESSION,
                "fullPath": str(project / f"{SESSION}.jsonl"),
                "firstPrompt": "The CSV export drops refund rows",
                "messageCount": 40,
                "created": "2026-04-14T09:00:00.000Z",
                "gitBranch": "fix/negative-rows",
                "projectPath": root,
            }
        ],
        "originalPath": root,
    }
    (project / "sessions-index.json").write_text(json.dumps(index))
    # Claude Code 2.0 wrote sub-agents beside the sessions (warm-up agents at start-up)
    warm = ClaudeLog(root, sep, agent="9845a4a3")
    warm.user("Warmup")
    warm.say("Ready.")
    _dump(project / "agent-9845a4a3.jsonl", warm.records)
    return project
