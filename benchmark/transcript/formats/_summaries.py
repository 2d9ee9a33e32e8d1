"""Summaries an agent already wrote into its own log (its compactions), recognised by text.

A summary stands in for messages the agent dropped: it is lossy, so probes
never take gold or evidence from it (``Message.summary``). Importers mark the
ones their format flags (Claude Code's ``isCompactSummary``, Codex's
``compacted`` records); this module finds the rest by the fixed wording the
agents open them with, which also marks them in chat exports of those
sessions and in Claude Code logs older than the flag.
"""

from __future__ import annotations

from benchmark.transcript.models import Message

# How each agent opens the summary it puts in place of a compacted conversation.
PREFIXES = (
    # Claude Code (both "...that ran out of context. The conversation is summarized below:"
    # and "...The summary below covers the earlier portion of the conversation.")
    "This session is being continued from a previous conversation",
    # Codex CLI's summary prefix (templates/compact/summary_prefix.md)
    "Another language model started to solve this problem and produced a summary",
)
_ROLES = ("user", "system")  # who a summary is handed to the model as


def is_summary_text(text: str | None) -> bool:
    """Whether ``text`` opens the way an agent's own compaction summary does."""
    return bool(text) and text.lstrip().startswith(PREFIXES)  # type: ignore[union-attr]


def mark_summaries(messages: list[Message]) -> list[Message]:
    """``messages`` with every summary recognised by its wording marked ``summary``."""
    return [
        m.model_copy(update={"summary": True})
        if not m.summary and m.role in _ROLES and is_summary_text(m.content)
        else m
        for m in messages
    ]
