"""One agent action as a :class:`~benchmark.activity.next_step.NextStep`, on every format.

A next-action probe's gold and a generated session's planted step must be read the
same way from every log: a SWE-agent ``edit 120:135`` (text protocol or imported),
``str_replace_editor`` with its sub-command, Claude Code's ``Edit``, Codex's
``apply_patch`` (a tool, an argv or a heredoc) and plain shell commands. The file a
SWE-agent editor command works on is not in the call: the caller passes the open file.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from benchmark.activity.actions import Action
from benchmark.activity.next_step import FINISH_ECHO, FINISH_TOOLS, NextStep, shell_step, verb_of
from benchmark.activity.operations import action_ops, applies_patch, patch_text, paths_of
from benchmark.activity.vocabulary import EDITOR_TOOLS, OLD_KEYS, tool_kind

SkipReason = Literal["no_action", "finish", "no_target"]
SKIP_REASONS: tuple[SkipReason, ...] = ("no_action", "finish", "no_target")

# SWE-agent commands that act on the editor's open file.
OPEN_FILE_COMMANDS = frozenset({"edit", "insert", "goto", "scroll_up", "scroll_down"})
_LINES = re.compile(r"^\s*(?:edit|insert)\s+(\d+)(?:\s*:\s*(\d+))?\s*$")
_SYMBOL = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
_HUNK = re.compile(r"^@@(.*)$", re.M)
# What a search tool looks for, by the argument names of SWE-agent's function calls
# (``search_term``, ``file_name``), Claude Code's ``Grep``/``Glob`` and others.
_SEARCH_KEYS = ("search_term", "file_name", "pattern", "query", "regex", "name", "term")


def is_finish(action: Action) -> bool:
    """A step that ends the session (``submit``, ``finish``): never a next step."""
    return action.tool in FINISH_TOOLS or bool(action.command and FINISH_ECHO.match(action.command))


def step_verb(action: Action) -> str:
    """The verb of ``action`` (:func:`~benchmark.activity.next_step.verb_of` with its
    editor sub-command; a shell command that applies a patch is an ``edit``)."""
    if action.command is not None:
        return "edit" if applies_patch(action) else "bash"
    sub, _ = _editor_words(action)
    return verb_of(action.name, sub)


def step_of(action: Action, open_file: str | None = None) -> NextStep | SkipReason:
    """``action`` as verb, target and region, or why it is no step (``finish``,
    ``no_target``); ``open_file`` is the SWE-agent editor's file at the call."""
    if is_finish(action):
        return "finish"
    verb = step_verb(action)
    if action.command is not None and verb == "bash":
        step = shell_step(action.command)
        return NextStep(verb=step[0], target=step[1]) if step else "no_target"
    target = _target(action, open_file)
    if not target:
        return "no_target"
    return NextStep(verb=verb, target=target, region=region_of(action))


def region_of(action: Action) -> str | None:
    """What an edit touches where the call says: ``lines a-b`` of a SWE-agent ``edit a:b``,
    ``line n`` of an insert, else the first ``def``/``class`` in the replaced text or a
    patch's hunk header; None otherwise."""
    args = action.args
    found = _LINES.match(str(args.get("_line", "")))
    if found:
        a, b = found.group(1), found.group(2)
        return f"lines {a}-{b}" if b and b != a else f"line {a}"
    line = args.get("insert_line")
    if isinstance(line, int) and not isinstance(line, bool) or str(line or "").isdigit():
        return f"line {line}"
    patch = _patch(action)
    for header in _HUNK.findall(patch):
        symbol = _SYMBOL.search(header.rsplit("@@", 1)[-1].strip())
        if symbol:
            return symbol.group(1)
    for key in OLD_KEYS:
        value = args.get(key)
        if isinstance(value, str) and (symbol := _SYMBOL.search(value)):
            return symbol.group(1)
    removed = "\n".join(line[1:] for line in patch.splitlines() if line.startswith("-"))
    symbol = _SYMBOL.search(removed)
    return symbol.group(1) if symbol else None


def _target(action: Action, open_file: str | None) -> str | None:
    tool, args = action.tool, action.args
    sub, words = _editor_words(action)
    if tool_kind(tool) == "search":
        return _search_target(args, words)
    if sub is not None and len(words) > 2:
        return words[2]  # ``str_replace_editor view /x.py`` as a text command
    paths = paths_of(args)
    if paths:
        return paths[0]
    if tool_kind(tool) == "patch" or action.command is not None:
        ops = action_ops(action, None)
        return ops[0][1] if ops else None
    if tool in OPEN_FILE_COMMANDS:
        return open_file
    return _search_target(args, words)


def _search_target(args: dict, words: list[str]) -> str | None:
    """What a search looks for, the same in every format: ``find_file x.py src`` typed
    (its first operand) or called (``file_name``), ``search_dir``, ``Grep``: the pattern
    or name, never the folder searched (most often the repository's root)."""
    if len(words) > 1:
        return words[1]
    for key in _SEARCH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _editor_words(action: Action) -> tuple[str | None, list[str]]:
    """(editor sub-command, the text command's words) of ``action``."""
    line = str(action.args.get("_line", ""))
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if action.tool not in EDITOR_TOOLS:
        return None, words
    sub = action.args.get("command")
    if isinstance(sub, str):
        return sub, words
    return (words[1] if len(words) > 1 else None), words


def _patch(action: Action) -> str:
    """The patch text of an ``apply_patch`` call or a shell command applying one; else ""."""
    if action.command is not None:
        return action.command if applies_patch(action) else ""
    return patch_text(action.args) if tool_kind(action.tool) == "patch" else ""
