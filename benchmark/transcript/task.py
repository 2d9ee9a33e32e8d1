"""Which task a log replays, so several runs of one task can be clustered as one.

The problem statement is the key when a log carries one (SWE-agent's ``ISSUE:`` block
or ``<pr_description>``, mini-swe-agent's task): two SWE-agent versions name the same
instance differently (``replay_config.problem_statement.id`` in 1.x, only the file name
before), but quote the same issue. Without one, an explicit id (``instance_id``, the
problem statement's ``id``); for Claude Code and Codex, the workspace's name and the
first real user prompt. Only a hash is kept: the task id never quotes the log.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from benchmark.transcript.models import Message
from benchmark.transcript.prelude import is_demonstration

_STATEMENT = (
    re.compile(r"ISSUE:\n(.*?)\n\s*INSTRUCTIONS:", re.S),
    re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S),
)
# Harness text a session opens with before the user's own prompt.
_INJECTED = ("<environment_context", "<user_instructions", "# agents.md", "<command-", "caveat:")


def task_id(
    value: Any, records: list[tuple[int, Any]] | None, messages: list[Message]
) -> str | None:
    """The task a log replays (``statement:<hash>``, ``id:<id>`` or ``prompt:<hash>``), or None."""
    statement = _statement(messages)
    if statement:
        return f"statement:{_hash(statement)}"
    explicit = _explicit_id(value)
    if explicit:
        return f"id:{explicit}"
    prompt = _first_prompt(messages)
    if prompt:
        return f"prompt:{_hash(_workspace(records or []) + chr(0) + prompt)}"
    return None


def _hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:12]


def _statement(messages: list[Message]) -> str | None:
    for m in messages:
        if m.role != "user" or not m.content or is_demonstration(m):
            continue
        for pattern in _STATEMENT:
            found = pattern.findall(m.content)
            if found:
                return found[-1].strip() or None
    return None


def _explicit_id(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    replay = value.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = json.loads(replay)
        except json.JSONDecodeError:
            replay = None
    statement = replay.get("problem_statement") if isinstance(replay, dict) else None
    for holder, key in (
        (value, "instance_id"),
        (value.get("info"), "instance_id"),
        (statement, "id"),
    ):
        found = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(found, str) and found:
            return found[:200]
    return None


def _first_prompt(messages: list[Message]) -> str | None:
    for m in messages:
        lead = (m.content or "").lower().lstrip()
        if m.role == "user" and lead and not lead.startswith(_INJECTED) and not is_demonstration(m):
            return m.content
    return None


def _workspace(records: list[tuple[int, Any]]) -> str:
    """The repository or folder a Claude Code / Codex session ran in (its last path part)."""
    for _, record in records[:50]:
        if not isinstance(record, dict):
            continue
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
        git = payload.get("git") if isinstance(payload.get("git"), dict) else {}
        where = git.get("repository_url") or payload.get("cwd")
        if isinstance(where, str) and where:
            return where.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return ""
