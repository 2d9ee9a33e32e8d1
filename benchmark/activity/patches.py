"""Patches as file operations: ``apply_patch`` envelopes and unified diffs.

A patch reaches the files by a patch tool (``apply_patch`` with the patch as
its input) or through the shell: older Codex ran ``["apply_patch", patch]``
or ``bash -lc "apply_patch <<'EOF' ... EOF"``, and any agent may pipe a diff
into ``git apply`` or ``patch -p1``. All of them end up here.
"""

from __future__ import annotations

import re
from typing import Literal

# ``unsure``: a command that may have rewritten the file (a formatter, a script given it).
OpKind = Literal["write", "edit", "read", "delete", "touch", "unsure"]
PatchOp = tuple[OpKind, str, str, str]  # (kind, path, added text, removed text)

PATCH_PROGRAMS = frozenset({"apply_patch", "applypatch"})
# ``git apply``/``patch`` options that only check or describe a patch, changing nothing.
_NO_CHANGE = frozenset({"--check", "--stat", "--numstat", "--summary", "--dry-run"})
_REVERSE = frozenset({"-R", "--reverse"})

_PATCH_HEAD = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_DIFF_OLD = re.compile(r"^--- (?:a/)?(\S+)")
_DIFF_NEW = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_ENVELOPE = re.compile(r"\*\*\* Begin Patch[^\n]*\n.*?(?:\*\*\* End Patch[^\n]*|\Z)", re.S)
_APPLY_PATCH = re.compile(r"(?<![\w-])(?:apply_patch|applypatch)(?![\w-])")
_FAILED = re.compile(
    r"^error:|patch failed|does not apply|Hunk #\d+ FAILED|hunks? FAILED|Invalid patch|"
    r"Failed to (?:find|read|apply|write)",
    re.I | re.M,
)


def patch_ops(patch: str) -> list[PatchOp]:
    """Operations of an ``apply_patch`` envelope or a unified diff."""
    ops: list[tuple[OpKind, str, list[str], list[str]]] = []
    old_path: str | None = None
    for line in patch.splitlines():
        head = _PATCH_HEAD.match(line)
        if head:
            kind: OpKind = {"Add": "write", "Update": "edit", "Delete": "delete"}[head.group(1)]
            ops.append((kind, head.group(2), [], []))
            continue
        if line.startswith("--- "):
            found = _DIFF_OLD.match(line)
            old_path = found.group(1) if found else None
            continue
        if line.startswith("+++ ") and old_path is not None:
            found = _DIFF_NEW.match(line)
            new_path = found.group(1) if found else "/dev/null"
            if new_path == "/dev/null":
                ops.append(("delete", old_path, [], []))
            else:
                ops.append(("write" if old_path == "/dev/null" else "edit", new_path, [], []))
            old_path = None
            continue
        if ops and line.startswith("+") and not line.startswith("+++"):
            ops[-1][2].append(line[1:])
        elif ops and line.startswith("-") and not line.startswith("---"):
            ops[-1][3].append(line[1:])
    return [(k, p, "\n".join(a), "\n".join(r)) for k, p, a, r in ops]


def split_envelopes(command: str) -> tuple[list[str], str]:
    """The ``apply_patch`` envelopes a shell command feeds to ``apply_patch`` (as a heredoc
    or an argument), and the command without them, so no patch line is read as a command."""
    found: list[str] = []
    rest: list[str] = []
    pos = 0
    for match in _ENVELOPE.finditer(command):
        if _APPLY_PATCH.search(command, 0, match.start()):
            found.append(match.group(0))
            rest.append(command[pos : match.start()])
            pos = match.end()
    rest.append(command[pos:])
    return found, "".join(rest)


def is_patch_program(program: str, args: list[str]) -> bool:
    """``apply_patch``, ``git apply`` or ``patch``: a program that applies a patch."""
    if program in PATCH_PROGRAMS or program == "patch":
        return True
    return program == "git" and args[:1] == ["apply"]


def piped_diff_ops(program: str, args: list[str], body: str) -> list[PatchOp] | None:
    """Operations of a diff fed on stdin to ``git apply`` or ``patch``; ``None`` for any
    other command. A check (``--check``, ``--dry-run``) changes nothing; ``-R`` undoes."""
    if program in PATCH_PROGRAMS or not is_patch_program(program, args):
        return None
    if not body.strip() or any(a in _NO_CHANGE for a in args):
        return []
    ops = patch_ops(body)
    if not any(a in _REVERSE for a in args):
        return ops
    undo: dict[OpKind, OpKind] = {"write": "delete", "delete": "write"}
    return [(undo.get(kind, kind), path, removed, added) for kind, path, added, removed in ops]


def patch_failed(output: str) -> bool:
    """Whether a patch program's output reports that the patch was not applied."""
    return bool(_FAILED.search(output))
