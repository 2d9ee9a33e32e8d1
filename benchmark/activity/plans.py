"""The agent's own plan, kept by a tool: Claude Code's ``TodoWrite``, Codex CLI's ``update_plan``.

Each call carries the whole current list (``{"todos": [{"content", "status",
"activeForm"}]}``, ``{"plan": [{"step", "status"}], "explanation"}``), so the
latest call is the plan's state; an item missing from a later call was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from benchmark.activity.actions import Action

PLAN_TOOLS = frozenset({"todowrite", "todo_write", "write_todos", "update_plan", "updateplan"})
LIST_KEYS = ("todos", "plan", "steps", "items")
TEXT_KEYS = ("content", "step", "description", "text", "title")
DONE = frozenset({"completed", "complete", "done"})
OPEN = frozenset({"pending", "in_progress", "in-progress", "todo", "not_started", "active"})

State = Literal["done", "open", "closed"]  # closed: cancelled or otherwise not worked on


@dataclass(frozen=True)
class PlanItem:
    text: str  # as the call holds it, before JSON escaping
    state: State


@dataclass(frozen=True)
class Plan:
    """The plan as one call set it: ``index`` is the message holding the call."""

    index: int
    items: tuple[PlanItem, ...]


def plan_of(action: Action) -> Plan | None:
    """The plan an action sets, or ``None`` when it is not a plan call (or holds no list)."""
    if action.tool.replace("-", "_") not in PLAN_TOOLS:
        return None
    args = action.args
    entries = next((args[k] for k in LIST_KEYS if isinstance(args.get(k), list)), None)
    if entries is None:
        return None
    items = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        text = next((entry[k] for k in TEXT_KEYS if isinstance(entry.get(k), str)), "").strip()
        if text:
            items.append(PlanItem(text, _state(entry.get("status"))))
    return Plan(action.index, tuple(items))


def plans(actions: list[Action]) -> list[Plan]:
    """Every plan call among ``actions``, in order."""
    return [plan for plan in map(plan_of, actions) if plan is not None]


def _state(status: object) -> State:
    value = str(status or "pending").strip().lower().replace(" ", "_")
    if value in DONE:
        return "done"
    return "open" if value in OPEN else "closed"
