"""File operations derived from agent actions: what was written, edited, read, deleted.

Real agents name the same operation many ways (``write_file``, ``Write``,
``str_replace_editor`` with ``command=create``, ``apply_patch``, ``cat > x``,
SWE-agent's ``create``/``edit``), so tool names and argument keys are matched
from :mod:`.vocabulary` and shell commands are tokenized rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from benchmark.activity.actions import Action, open_file
from benchmark.activity.declined import declined
from benchmark.activity.patches import (
    PATCH_PROGRAMS,
    OpKind,
    is_patch_program,
    patch_failed,
    patch_ops,
)
from benchmark.activity.powershell import powershell_programs
from benchmark.activity.rewrites import script_writes, scripts_run
from benchmark.activity.shell import in_powershell, programs, shell_ops
from benchmark.activity.spelling import spellings
from benchmark.activity.vocabulary import (
    DELETE_TOOLS,
    EDIT_TOOLS,
    EDITOR_COMMANDS,
    EDITOR_TOOLS,
    INSPECT_PROGRAMS,
    NEW_KEYS,
    OLD_KEYS,
    PATCH_KEYS,
    PATCH_TOOLS,
    PATH_KEYS,
    PS_INSPECT,
    READ_TOOLS,
    SEARCH_TOOLS,
    WRITE_TOOLS,
)

_FAILED = re.compile(
    r"^\s*(?:(?:error|failed|failure|exception)\s*[:!]|failed to\b)|no replacement was performed|"
    r"did not appear "
    r"verbatim|your proposed edit has introduced|no such file|file not found|does not exist|"
    r"could not find|was not found|not found in (?:the )?file|no match(?:es)? found|"
    r"permission denied|^\s*<tool_use_error>",
    re.I,
)


@dataclass(frozen=True)
class FileOp:
    """One operation on one file.

    ``path`` is spelled as it appears verbatim in message ``index`` (the call
    or its result), so it can serve as a gold fact with that message as evidence;
    an ``unsure`` operation's path may not be (it only keeps a file from being
    called read-only).
    """

    kind: OpKind
    path: str
    index: int
    action_index: int
    added: str = ""
    removed: str = ""
    failed: bool = False
    result_index: int | None = None

    def changed(self) -> str:
        """The added lines the replaced text did not already have (context lines dropped)."""
        old = {line.strip() for line in self.removed.splitlines()}
        return "\n".join(
            line for line in self.added.splitlines() if line.strip() and line.strip() not in old
        )


def file_ops(actions: list[Action], texts: dict[int, str]) -> list[FileOp]:
    """Every file operation of ``actions``, in order."""
    ops: list[FileOp] = []
    current: str | None = None  # the SWE-agent editor's open file
    scripts: dict[str, str] = {}  # a script's name -> the text the session wrote into it
    for action in actions:
        found = action_ops(action, current)
        if action.command is not None:  # a script the session wrote writes files too
            for script in scripts_run(programs(action.command)):
                found += script_writes(scripts.get(script.rsplit("/", 1)[-1], ""))
        for kind, path, added, removed in found:
            name = path.rsplit("/", 1)[-1]
            if kind == "write" and added:
                scripts[name] = added
            elif kind == "edit" and added:  # SWE-agent: ``create x.py``, then ``edit 1:1``
                scripts[name] = scripts.get(name, "") + "\n" + added
            failed = _failed(action, kind)
            spelled = _spelled(path, action, texts)
            if spelled is None and kind in ("write", "edit", "unsure"):
                # A change the call does not spell (a script's own ``open(p, 'w')``): no fact
                # can cite it, but the file was not only read.
                kind, spelled = "unsure", (action.index, path)
            if spelled is None:
                continue
            text_index, spelling = spelled
            ops.append(
                FileOp(
                    kind,
                    spelling,
                    text_index,
                    action.index,
                    added,
                    removed,
                    failed,
                    action.result_index,
                )
            )
            if kind in ("write", "read", "edit") and action.tool in ("open", "create"):
                current = spelling
        named = open_file(action.result) if action.result else None
        if named:
            current = named
    return ops


def is_inspection(action: Action) -> bool:
    """True when the action only looks at files (its output is file content, not a run)."""
    tool = action.tool
    if action.command is not None:
        return _inspects(action.command)
    if tool in READ_TOOLS or tool in SEARCH_TOOLS:
        return True
    return tool in EDITOR_TOOLS and str(action.args.get("command", "")) == "view"


def action_ops(action: Action, current: str | None) -> list[tuple[OpKind, str, str, str]]:
    """(kind, path, added text, removed text) tuples of one action."""
    tool, args = action.tool, action.args
    if action.command is not None:
        argv = next((args[k] for k in ("command", "cmd") if isinstance(args.get(k), list)), [])
        if len(argv) == 2 and str(argv[0]).rsplit("/", 1)[-1] in PATCH_PROGRAMS:
            return patch_ops(str(argv[1]))  # ["apply_patch", patch]: the patch is one argument
        return shell_ops(action.command)
    paths = paths_of(args)
    if tool in EDITOR_TOOLS:
        sub = str(args.get("command", ""))
        kind = EDITOR_COMMANDS.get(sub)
        if kind is None:
            return []
        return [(kind, p, _text(args, NEW_KEYS), _text(args, OLD_KEYS)) for p in paths]
    if tool in PATCH_TOOLS:
        return patch_ops(patch_text(args))
    if tool in WRITE_TOOLS:
        paths = paths or ([current] if tool == "create" and current else [])
        return [("write", p, _text(args, NEW_KEYS), "") for p in paths]
    if tool in EDIT_TOOLS:
        paths = paths or ([current] if current else [])
        added, removed = _edit_texts(args)
        return [("edit", p, added, removed) for p in paths]
    if tool in READ_TOOLS:
        return [("read", p, "", "") for p in paths]
    if tool in DELETE_TOOLS:
        return [("delete", p, "", "") for p in paths]
    return []


def paths_of(args: dict[str, Any]) -> list[str]:
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return [value.strip()]
        if isinstance(value, list):
            return [v.strip() for v in value if isinstance(v, str) and v.strip()]
    return []


def _text(args: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _edit_texts(args: dict[str, Any]) -> tuple[str, str]:
    edits = args.get("edits")
    if isinstance(edits, list):
        pairs = [e for e in edits if isinstance(e, dict)]
        added = "\n".join(_text(e, NEW_KEYS) for e in pairs)
        removed = "\n".join(_text(e, OLD_KEYS) for e in pairs)
        return added, removed
    return _text(args, NEW_KEYS), _text(args, OLD_KEYS)


def patch_text(args: dict[str, Any]) -> str:
    """The patch an ``apply_patch``-like call carries (or its argv's last word)."""
    for key in PATCH_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
    command = args.get("command")
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return command[-1]
    return command if isinstance(command, str) else ""


def _spelled(path: str, action: Action, texts: dict[int, str]) -> tuple[int, str] | None:
    """Where ``path`` (or it without ``./``) appears: the call, then the result.

    In a call the path may be JSON-escaped (a backslash, a quote, ``\\u``-escaped
    non-ASCII); it is still returned as the log means it (``C:\\src\\a.py`` with
    single backslashes), the spelling a person writes; evidence finds the escaped one.
    """
    path = path.strip()
    if not path:
        return None
    plain = [path, path[2:]] if path.startswith("./") else [path]
    for where in (action.index, action.result_index):
        if where is None or where not in texts:
            continue
        for spelling in (s for p in plain for s in spellings(p)):
            if spelling in texts[where]:
                return where, next(p for p in plain if spelling in spellings(p))
    return None


def _failed(action: Action, kind: OpKind) -> bool:
    """A tool's own error reply; for a read only its first line counts (the rest is content).

    A call the user rejected (or an approval, a permission, a hook denied) did nothing. A
    shell command's operations fail otherwise only when it applies a patch that did not.
    """
    if not action.result:
        return False
    if declined(action.result):
        return True
    if action.command is None and action.tool in PATCH_TOOLS and patch_failed(action.result):
        return True
    if action.command is not None:
        return kind != "read" and applies_patch(action) and patch_failed(action.result)
    head = action.result.lstrip().split("\n", 1)[0] if kind == "read" else action.result[:400]
    return bool(_FAILED.search(head))


_GIT_INSPECT = frozenset({"diff", "show", "log", "status", "blame", "grep"})


def applies_patch(action: Action) -> bool:
    argv = action.args.get("command")
    if isinstance(argv, list) and argv and str(argv[0]).rsplit("/", 1)[-1] in PATCH_PROGRAMS:
        return True
    return any(is_patch_program(p, args) for p, args in programs(action.command or ""))


@lru_cache(maxsize=4096)
def _inspects(command: str) -> bool:
    """A shell command that only shows files (``cat x``, ``grep -n y``, ``sed -n 1,9p``)."""
    found = programs(command)
    if not found or any(kind != "read" for kind, *_ in shell_ops(command)):
        return False
    if in_powershell(command):
        return all(program in PS_INSPECT for program, _ in powershell_programs(command))
    for program, args in found:
        if program == "sed" and not any(a.startswith("-i") for a in args):
            continue
        if program == "git" and args[:1] and args[0] in _GIT_INSPECT:
            continue
        if program not in INSPECT_PROGRAMS:
            return False
    return True
