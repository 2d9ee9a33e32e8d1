"""What a rubric criterion asks about when its question is about one kind of gold fact.

Owned by the rubric because it is what the criterion's question says ("which
files were created" asks about created facts), not how a judge scores it. Read
by the judge audit (``benchmark.audit.expected``: the band a correct judge's
score lies in) and by the reference judge (``benchmark.judge.reference``: the
facts it scores a criterion over); the audit thereby stays independent of any
judge's scoring table.
"""

from __future__ import annotations

from benchmark.probe.models import FactKind

FILE_KINDS: tuple[FactKind, ...] = ("created", "modified", "read")
REASONING_KINDS: tuple[FactKind, ...] = ("choice", "rationale", "alternative")

# Criteria that ask about one kind of fact (the rest ask about the whole answer).
SCOPES: dict[str, tuple[FactKind, ...]] = {
    "context_artifact_state": FILE_KINDS,
    "artifact_files_created": ("created",),
    "artifact_files_modified": ("modified",),
    "artifact_key_details": ("identifier", "detail"),
    "continuity_todo_state": ("pending",),
    "continuity_reasoning": REASONING_KINDS,
}
