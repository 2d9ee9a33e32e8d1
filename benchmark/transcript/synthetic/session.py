"""Message emission with tool-call bookkeeping, planted facts and the token budget.

The budget check happens *before* a new message is emitted: once the session
has reached its target, the next emission raises :class:`Stop`. So a turn's
assistant message and its tool results always land together, and facts
recorded right after an emission are never lost.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import benchmark.transcript.synthetic.outputs as outputs
import benchmark.transcript.synthetic.topics as topics
from benchmark.activity.actions import Action
from benchmark.activity.next_step import NextStep
from benchmark.activity.steps import step_of
from benchmark.activity.vocabulary import shell_command
from benchmark.transcript.models import FunctionCall, Message, ToolCall
from benchmark.transcript.synthetic.project import Project, SourceFile


class Stop(Exception):
    """The session reached its token target."""


@dataclass
class Task:
    text: str
    fact: dict[str, Any]
    closable: str = ""
    closed: bool = False
    thing: str = ""


@dataclass
class Session:
    project: Project
    rng: random.Random
    target: int
    messages: list[Message] = field(default_factory=list)
    total: int = 0
    facts: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    calls: int = 0
    branch: str = "main"
    commits: list[tuple[str, str]] = field(default_factory=list)
    changed: dict[str, list[int]] = field(default_factory=dict)  # path -> [adds, dels] uncommitted
    created: list[str] = field(default_factory=list)
    episode_start: int = 0  # index into ``tasks`` of the first task of the current episode
    carry: str = ""  # a short user remark to prepend to the next user message
    review_cursor: int = 0  # next file a review episode starts from

    # -- emission -------------------------------------------------------------------------
    def _guard(self) -> None:
        if self.total >= self.target:
            raise Stop

    def _append(self, message: Message) -> int:
        self.messages.append(message)
        self.total += message.tokens
        return len(self.messages) - 1

    def system(self, text: str) -> int:
        return self._append(Message(role="system", content=text))

    def user(self, text: str) -> int:
        self._guard()
        if self.carry:
            text, self.carry = f"{self.carry} {text}", ""
        return self._append(Message(role="user", content=text))

    def say(
        self,
        text: str,
        *,
        add: list[Task] | None = None,
        close: list[Task] | None = None,
        heading: str = "",
        full: bool = False,
    ) -> int:
        self._guard()
        content = self._with_tasks(text, add or [], close or [], heading, full)
        index = self._append(Message(role="assistant", content=content))
        self._record_tasks(index, add or [], close or [])
        return index

    def act(
        self,
        text: str,
        calls: list[tuple[str, dict[str, str], str]],
        *,
        add: list[Task] | None = None,
        close: list[Task] | None = None,
        heading: str = "",
        full: bool = False,
    ) -> tuple[int, list[int]]:
        """One assistant turn with tool calls, followed by one tool result per call."""
        self._guard()
        content = self._with_tasks(text, add or [], close or [], heading, full) or None
        tool_calls = []
        for name, args, _ in calls:
            self.calls += 1
            tool_calls.append(
                ToolCall(
                    id=f"call_{self.calls:04d}",
                    function=FunctionCall(name=name, arguments=json.dumps(args)),
                )
            )
        index = self._append(Message(role="assistant", content=content, tool_calls=tool_calls))
        results = [
            self._append(Message(role="tool", tool_call_id=call.id, content=result))
            for call, (_, _, result) in zip(tool_calls, calls, strict=True)
        ]
        self._record_tasks(index, add or [], close or [])
        self._plant_steps(index, calls)
        return index, results

    def _plant_steps(self, index: int, calls: list[tuple[str, dict[str, str], str]]) -> None:
        """Each call as the step a next-action probe's gold reads from it (kind ``action``):
        the known next step at any point before it. Recorded as is (a command's head is
        not always spelled verbatim), never changing a message."""
        for name, args, _ in calls:
            step = step_of(Action(index, name, dict(args), shell_command(name, args)))
            if isinstance(step, NextStep):
                details = {"tool": name, "region": step.region}
                self.facts.append(
                    {
                        "kind": "action",
                        "key": step.verb,
                        "value": step.target,
                        "message_index": index,
                        "details": details,
                    }
                )

    # -- facts ----------------------------------------------------------------------------
    def fact(self, kind: str, key: str, value: str, index: int, **details: Any) -> dict[str, Any]:
        if value not in self.messages[index].render():
            raise AssertionError(f"planted {kind} value {value!r} is not in message {index}")
        record = {
            "kind": kind,
            "key": key,
            "value": value,
            "message_index": index,
            "details": details,
        }
        if kind == "error" or details.get("of") == "error":
            self.project.taken_errors.add(value)
        self.facts.append(record)
        return record

    def new_task(self, text: str, closable: str = "", thing: str = "") -> Task:
        return Task(text=text, fact={}, closable=closable, thing=thing)

    def open_tasks(self) -> list[Task]:
        return [t for t in self.tasks if not t.closed]

    def _with_tasks(
        self, text: str, add: list[Task], close: list[Task], heading: str, full: bool
    ) -> str:
        """Append a checklist: the episode's own tasks, or every open task when ``full``."""
        if not add and not close:
            return text
        pool = self.tasks if full else self.tasks[self.episode_start :]
        shown_open = [t.text for t in pool if not t.closed and t not in close]
        shown_open += [t.text for t in add if t not in close]
        done = [t.text for t in close]
        heading = heading or self.rng.choice(topics.CHECKLIST_HEADINGS)
        block = topics.checklist(heading, shown_open, done)
        return f"{text}\n\n{block}" if text else block

    def _record_tasks(self, index: int, add: list[Task], close: list[Task]) -> None:
        for task in add:
            task.fact = self.fact(
                "pending", task.text, task.text, index, opened_at=index, closed_at=None
            )
            self.tasks.append(task)
        for task in close:
            task.closed = True
            if task.fact:
                task.fact["details"]["closed_at"] = index

    # -- tools ----------------------------------------------------------------------------
    def read(self, text: str, paths: list[str], **task_kw: Any) -> int:
        calls = [("read_file", {"path": p}, self.project.file(p).text) for p in paths]
        index, results = self.act(text, calls, **task_kw)
        for path, result in zip(paths, results, strict=True):
            self.fact("file_read", path, path, index, result_index=result)
        return index

    def bash(self, text: str, command: str, output: str, **task_kw: Any) -> tuple[int, int]:
        index, results = self.act(text, [("bash", {"command": command}, output)], **task_kw)
        return index, results[0]

    def grep(self, text: str, pattern: str, path: str, **task_kw: Any) -> int:
        """Search with the grep tool, or now and then with ``grep -rn`` through bash."""
        matches = outputs.grep_matches(self.project, pattern, path)
        if self.rng.random() < 0.35 and "'" not in pattern:
            output = outputs.with_exit("\n".join(matches), 0 if matches else 1)
            index, _ = self.act(
                text, [("bash", {"command": f"grep -rn '{pattern}' {path}"}, output)], **task_kw
            )
            return index
        result = "\n".join(matches) if matches else f"No matches for '{pattern}' in {path}"
        index, _ = self.act(text, [("grep", {"pattern": pattern, "path": path}, result)], **task_kw)
        return index

    def edit(self, text: str, path: str, old: str, new: str, change: str, **task_kw: Any) -> int:
        source = self.project.file(path)
        source.replace(old, new)
        n_old, n_new = old.count("\n") + 1, new.count("\n") + 1 if new else 0
        result = (
            f"Edited {path}: replaced {n_old} line{'s' if n_old != 1 else ''} with "
            f"{n_new} line{'s' if n_new != 1 else ''}"
        )
        index, results = self.act(
            text, [("edit_file", {"path": path, "old_str": old, "new_str": new}, result)], **task_kw
        )
        stats = self.changed.setdefault(path, [0, 0])
        stats[0] += n_new
        stats[1] += n_old
        self.fact("file_modified", path, path, index, change=change, result_index=results[0])
        return index

    def write(self, text: str, source: SourceFile, purpose: str, **task_kw: Any) -> int:
        self.project.add(source)
        lines = outputs.count_lines(source.text)
        index, results = self.act(
            text,
            [
                (
                    "write_file",
                    {"path": source.path, "content": source.text},
                    f"Created {source.path} ({lines} lines)",
                )
            ],
            **task_kw,
        )
        self.created.append(source.path)
        self.changed.setdefault(source.path, [0, 0])[0] += lines
        self.fact(
            "file_created",
            source.path,
            source.path,
            index,
            purpose=purpose,
            result_index=results[0],
        )
        return index
