"""Artifact probes: files created, modified and only read in the region, and what changed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from benchmark.activity.files import PathKeys, is_generated
from benchmark.activity.operations import FileOp
from benchmark.probe.candidate import Candidate, View, listing
from benchmark.probe.models import Evidence, Fact
from benchmark.probe.text import fact_kind
from benchmark.text import identifiers

Status = Literal["created", "modified", "read"]

MAX_FILES = 10  # per status in the overview question
MAX_CHANGES = 4  # change facts per file

_DEF = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|enum|trait|impl)\s+([A-Za-z_]\w*)"
)
_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::[^=\n]{1,40})?=(?!=)", re.M)
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_LITERAL = re.compile(r"\"([^\"\\\n]{4,80})\"|'([^'\\\n]{4,80})'")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]")
# A comment line: ``#`` (not ``#!``, ``#include``, ``#[attr]``...), ``//``, ``/*``, `` * ``.
_COMMENT = re.compile(
    r"^\s*(?:#(?!!|include|define|if|endif|pragma|\[)|//|/\*|\*(?:\s|/|$)|<!--|--\s)"
)
_PROSE = re.compile(r"\.(?:md|markdown|rst|txt|adoc)$|(?:^|/)(?:README|CHANGELOG|NEWS)$", re.I)
_COMMENT_TAIL = re.compile(r"\s+(?:#|//)\s.*$")


@dataclass
class FileRecord:
    """One file's trail in the region: its status and the operations behind it."""

    key: str
    status: Status | None = None
    ops: list[FileOp] = field(default_factory=list)
    deleted: bool = False
    unsure: bool = False  # a command may have rewritten it: never gold as only read

    def spelling(self, view: View) -> tuple[str, int] | None:
        """How the file is spelled in a region message that shows its status."""
        wanted = {
            "created": ("write", "touch", "edit"),
            "modified": ("edit", "write"),
            "read": ("read",),
        }[self.status or "read"]
        for kinds in (wanted, ("write", "touch", "edit", "read", "delete")):
            for op in self.ops:
                if op.kind in kinds and view.in_region(op.index):
                    return op.path, op.index
        return None


def file_records(view: View) -> list[FileRecord]:
    """Files touched by calls made in the region, in first-touch order."""
    paths = PathKeys()
    records: dict[str, FileRecord] = {}
    for op in view.file_ops:
        if op.failed or not view.in_region(op.action_index):
            continue
        rec = records.setdefault(paths.key(op.path), FileRecord(paths.key(op.path)))
        rec.ops.append(op)
        if op.kind == "delete":
            rec.deleted = True
        elif op.kind == "unsure":
            rec.unsure = True
        elif rec.status is None:
            rec.status = {
                "write": "created",
                "touch": "created",
                "edit": "modified",
                "read": "read",
            }[op.kind]  # type: ignore[assignment]
        elif rec.status == "read" and op.kind in ("write", "edit"):
            rec.status = "modified"
    return [rec for rec in records.values() if rec.status is not None]


def read_only(records: list[FileRecord]) -> list[FileRecord]:
    """The files only read: none the region changed, or may have (``unsure``)."""
    return [r for r in records if r.status == "read" and not r.unsure]


def artifact_candidates(view: View) -> list[Candidate]:
    records = file_records(view)
    out = list(_overview(view, records))
    out.extend(_read_only(view, records))
    for rec in records:
        if rec.status in ("created", "modified"):
            out.extend(_changes(view, rec))
    return out


def latest(records: list[FileRecord], status: Status) -> tuple[list[FileRecord], bool]:
    """At most ``MAX_FILES`` files of ``status`` (read: :func:`read_only`), the ones touched
    last, in first-touch order; and whether some were left out.

    Regions of later points hold those of earlier ones: the first files of a long
    session would make every point ask the same question (dropped as a repeat),
    while the latest ones are what each point's own stretch of work touched.
    """
    found = read_only(records) if status == "read" else [r for r in records if r.status == status]
    last = sorted(found, key=lambda r: max(op.action_index for op in r.ops))[-MAX_FILES:]
    return [r for r in found if r in last], len(found) > len(last)


def _overview(view: View, records: list[FileRecord]) -> Iterator[Candidate]:
    facts: list[Fact] = []
    evidence: list[Evidence] = []
    parts: list[str] = []
    cut = False
    for status, label in (("created", "Created"), ("modified", "Modified"), ("read", "Read only")):
        names = []
        chosen, left_out = latest(records, status)  # type: ignore[arg-type]
        cut = cut or left_out
        for rec in chosen:
            found = rec.spelling(view)
            ev = view.evidence(found[1], found[0]) if found else None
            if found is None or ev is None:
                continue
            facts.append(Fact(kind=status, text=found[0]))
            evidence.append(ev)
            names.append(f"`{found[0]}`" + (" (later deleted)" if rec.deleted else ""))
        if names:
            parts.append(f"{label}: {', '.join(names)}.")
    if not any(f.kind in ("created", "modified") for f in facts):
        return
    which = "in this part of the session" + (f" (the last {MAX_FILES} of each kind)" if cut else "")
    yield Candidate(
        type="artifact",
        question=(
            "Which files did we create, which existing files did we modify, and which did we "
            f"only read or examine {which}? What changed in each?"
        ),
        answer=" ".join(parts),
        facts=tuple(facts),
        evidence=tuple(evidence),
        anchor=sorted(e.message_index for e in evidence)[len(evidence) // 2],
        priority=True,
    )


def _read_only(view: View, records: list[FileRecord]) -> Iterator[Candidate]:
    read, cut = latest(records, "read")
    facts, evidence = [], []
    for rec in read:
        found = rec.spelling(view)
        ev = view.evidence(found[1], found[0]) if found else None
        if found and ev:
            facts.append(Fact(kind="read", text=found[0]))
            evidence.append(ev)
    if not facts:
        return
    question = "Which files did we open or read to examine them, without changing them?"
    if cut:
        question = (
            f"Which {len(facts)} files did we open or read most recently to examine them, "
            "without changing them?"
        )
    yield listing(
        "artifact",
        question,
        "Read without changes: ",
        facts,
        evidence,
        anchor=sorted(e.message_index for e in evidence)[len(evidence) // 2],
    )


def _changes(view: View, rec: FileRecord) -> Iterator[Candidate]:
    """'What did we change in x?' with the edit's new names and strings as gold."""
    found = rec.spelling(view)
    if found is None or is_generated(found[0]):
        return
    path = found[0]
    known = ""  # file text seen so far in the region, to tell new names from old ones
    facts: list[Fact] = []
    evidence: list[Evidence] = []
    for op in rec.ops:
        if op.kind == "read":
            if view.in_region(op.result_index):
                known += "\n" + view.texts[op.result_index]  # type: ignore[index]
            continue
        if op.kind not in ("write", "edit") or not view.in_region(op.action_index):
            continue
        old = op.removed or known
        code = not _PROSE.search(path)  # a ``#`` line of a Markdown file is a heading
        tokens = change_tokens(op.added, old, code) if op.added else []
        for token in tokens or removed_code(op.removed, op.added, code):
            if len(facts) >= MAX_CHANGES or token in path:
                continue
            cited = view.cite(op.action_index, token)
            if cited is None or any(f.text == cited[0] for f in facts):
                continue
            facts.append(Fact(kind=fact_kind(token), text=cited[0]))
            evidence.append(cited[1])
        known += "\n" + op.added
    if not facts:
        return
    verb = "put in the new file" if rec.status == "created" else "change in"
    done = "wrote" if rec.status == "created" else "changed"
    yield listing(
        "artifact",
        f"What did we {verb} `{path}`?",
        f"In `{path}` we {done} ",
        facts,
        evidence,
        anchor=evidence[0].message_index,
    )


def change_tokens(added: str, old: str, code: bool = True) -> list[str]:
    """Distinctive names and strings of the code ``added`` introduces and ``old`` lacks, best first.

    Only the lines that differ count, and of them the code: a comment line (or a
    trailing comment) is read only when no code line changed, since a comment kept
    or reworded beside the edit says nothing of what the code now does. Definitions
    come first, then pins/versions, then assigned names, then other code identifiers
    and string literals; the first changed code line is the fallback.
    """
    old_lines = {line.strip() for line in old.splitlines()}
    changed = [
        line
        for line in added.splitlines()
        if line.strip() and line.strip() not in old_lines and re.search(r"\w", line)
    ]
    if code:
        changed_code = [_COMMENT_TAIL.sub("", line) for line in changed if not is_comment(line)]
    else:
        changed_code = changed
    body = "\n".join(changed_code or changed)
    ranked: list[str] = []
    ranked += _DEF.findall(body)
    harvested = identifiers.harvest(body, ("pin", "version", "url"))
    ranked += harvested.get("pin", []) + harvested.get("version", []) + harvested.get("url", [])
    ranked += [m for m in _ASSIGN.findall(body) if _distinctive(m)]
    ranked += [m for m in _IDENT.findall(body) if _distinctive(m)]
    ranked += [a or b for a, b in _LITERAL.findall(body) if " " not in (a or b).strip()]
    out: list[str] = []
    for token in ranked:
        token = token.strip()
        if not token or _in_old(token, old) or any(token in kept for kept in out):
            continue
        out.append(token)
    if not out:
        out.extend(changed_line([line for line in changed_code if line.strip()] or changed))
    return out


def removed_code(removed: str, added: str, code: bool = True) -> list[str]:
    """The first code line an edit deleted (a comment when only comments went): the change
    of an edit that adds nothing new."""
    kept = {line.strip() for line in added.splitlines()}
    gone = [
        line
        for line in removed.splitlines()
        if line.strip() and line.strip() not in kept and re.search(r"\w", line)
    ]
    return changed_line([line for line in gone if not (code and is_comment(line))] or gone)


def changed_line(lines: list[str]) -> list[str]:
    """The first whole line (at most 160 characters) of ``lines``, a wordy one if any."""
    short = [line.strip() for line in lines if len(line.strip()) <= 160]
    wordy = [line for line in short if len(re.findall(r"\w", line)) >= 8]
    return (wordy or short)[:1]


def is_comment(line: str) -> bool:
    """A line that is only a comment (``#``, ``//``, ``/*``, `` * ``, ``<!--``, ``-- ``)."""
    return bool(_COMMENT.match(line))


def _distinctive(name: str) -> bool:
    return len(name) >= 4 and ("_" in name.strip("_") or "." in name or bool(_CAMEL.search(name)))


def _in_old(token: str, old: str) -> bool:
    """Whether ``token`` occurs in ``old`` as a whole name (not inside a longer one)."""
    pos = old.find(token)
    while pos >= 0:
        before = old[pos - 1] if pos else " "
        after = old[pos + len(token) : pos + len(token) + 1] or " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        pos = old.find(token, pos + 1)
    return False
