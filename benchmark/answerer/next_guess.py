"""The offline answerer's guess at the agent's next step, read from the actions in its context.

A next-action question asks what the agent does next. Without a model, the
context's own actions (``benchmark.activity``) still say a lot: agents work in
a loop of run, read, edit, rerun. So the guess follows the last thing done:

1. the last action is a failing test run: ``edit`` the file its traceback
   names (the innermost frame outside installed packages), else the last
   file opened;
2. the last action edited a file: rerun the last test command (``bash``);
3. a file was opened and not edited since: ``edit`` it;
4. an open task of the agent's plan names a path: ``edit`` the first;
5. else repeat the last action.

What a policy dropped cannot be read, so the guess is a baseline that
compaction can hurt, like any answerer's. The reply is the one line
``verb target`` the question asks for (empty when the context holds no action
and no task with a path: scored 0).
"""

from __future__ import annotations

import re

from benchmark.activity.actions import Action
from benchmark.activity.next_step import NextStep, command_target, shell_step
from benchmark.activity.operations import FileOp
from benchmark.activity.plans import plans
from benchmark.answerer.answer_kinds import Reading
from benchmark.probe.runs import TestRun, test_runs

# A traceback frame (``File "x.py", line 3``) or a pytest location (``x.py:3: in f``).
_FRAME = re.compile(r'File "([^"<>\n]+\.\w+)", line \d+|^([\w./-]+\.\w+):\d+:', re.M)
_INSTALLED = re.compile(r"site-packages|dist-packages|/lib/python\d|^<")
_TASK_PATH = re.compile(r"`?((?:[\w.-]+/)*[\w-]+\.\w{1,8})`?")
_OP_VERB = {"read": "open", "edit": "edit", "write": "create", "touch": "create"}
_CHANGES = ("edit", "write", "delete")


def next_step_line(reading: Reading) -> str:
    """The guess as the ``verb target`` line a next-action question asks for ("" if none)."""
    step = guess(reading)
    return step.line() if step is not None else ""


def guess(reading: Reading) -> NextStep | None:
    """The next step the context's own actions point to (the module docstring's rules)."""
    actions, ops = reading.actions, reading.ops
    last = actions[-1] if actions else None
    runs = test_runs(actions)
    if last is not None:
        run = runs[-1] if runs and runs[-1].index == last.index else None
        if run is not None and run.outcome == "fail":
            path = traceback_file(last.result) or last_opened(ops)
            if path:
                return NextStep(verb="edit", target=path)
        elif runs and any(o.action_index == last.index and o.kind in _CHANGES for o in ops):
            return rerun(runs[-1])
    path = last_opened(ops)
    if path:
        return NextStep(verb="edit", target=path)
    task = first_task_path(reading)
    if task:
        return NextStep(verb="edit", target=task)
    return repeated(last, ops) if last is not None else None


def traceback_file(output: str) -> str | None:
    """The innermost frame's file of a test output that lies outside installed packages."""
    frames = [a or b for a, b in _FRAME.findall(output)]
    own = [f for f in frames if not _INSTALLED.search(f)]
    return own[-1] if own else None


def last_opened(ops: list[FileOp]) -> str | None:
    """The file last read and not changed after its reading."""
    changed: set[str] = set()
    for op in reversed(ops):
        if op.kind in _CHANGES:
            changed.add(op.path)
        elif op.kind == "read" and op.path not in changed:
            return op.path
    return None


def rerun(run: TestRun) -> NextStep | None:
    target = command_target(run.command)
    return NextStep(verb="bash", target=target) if target else None


def first_task_path(reading: Reading) -> str | None:
    """The first path an open item of the agent's latest plan names."""
    found = plans(reading.actions)
    if not found:
        return None
    for item in found[-1].items:
        if item.state == "open":
            match = _TASK_PATH.search(item.text)
            if match and ("/" in match.group(1) or "." in match.group(1)):
                return match.group(1)
    return None


def repeated(action: Action, ops: list[FileOp]) -> NextStep | None:
    """The last action again: its file operation, or its shell command."""
    own = [o for o in ops if o.action_index == action.index]
    if own:
        return NextStep(verb=_OP_VERB.get(own[-1].kind, "edit"), target=own[-1].path)
    step = shell_step(action.command) if action.command else None
    return NextStep(verb=step[0], target=step[1]) if step else None
