"""Text tables: the prose of scenarios and features, kept as YAML data beside the code.

A table (``data/<name>.yaml``) maps each kind to its entry; an entry's keys hold one
:meth:`str.format_map` template or a list of them, filled from one scenario's values.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.topics import Decision


class Entry:
    """One section of a table: each key holds one or more templates."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        self.fields = fields

    def has(self, key: str) -> bool:
        return key in self.fields

    def text(self, key: str, values: Mapping[str, Any], default: str = "") -> str:
        items = self.fields.get(key)
        return items[0].format_map(values) if items else default

    def texts(self, key: str, values: Mapping[str, Any]) -> list[str]:
        return [item.format_map(values) for item in self.fields.get(key, [])]

    def variant(self, key: str, values: Mapping[str, Any], near: bool) -> str:
        """``near_<key>`` for the second, near-miss failure when the entry words it apart."""
        return self.text(f"near_{key}" if near and self.has(f"near_{key}") else key, values)

    def decision(self, values: Mapping[str, Any]) -> Decision:
        return Decision(
            topic=self.text("topic", values),
            choice=self.text("choice", values),
            alternatives=tuple(self.texts("alternative", values)),
            rationale=self.text("rationale", values),
            against=self.text("against", values),
        )


@cache
def table(name: str) -> dict[str, Entry]:
    """The table in ``data/<name>.yaml``, in file order (the planner walks it in that order)."""
    raw: dict[str, dict[str, str | list[str]]] = resources.yaml_data(f"{name}.yaml")
    return {
        kind: Entry(
            {key: value if isinstance(value, list) else [value] for key, value in entry.items()}
        )
        for kind, entry in raw.items()
    }


def bug_stories() -> dict[str, Entry]:
    """The words of each bug scenario kind and of dependency upgrades."""
    return table("bug_stories")


def feature_texts() -> dict[str, Entry]:
    """The words of each feature request."""
    return table("features")


def project_values(project: Project) -> dict[str, Any]:
    """What every template may name: the project, its vendor and its main entity."""
    theme, main = project.theme, project.main
    return {
        "pkg": project.pkg,
        "pkg_upper": project.pkg.upper(),
        "vendor": theme.vendor,
        "developer": project.developer,
        "milestone": theme.milestone,
        "first_command": theme.commands[0],
        "workers": project.workers,
        "entity": main.name,
        "plural": main.plural,
        "cls": main.cls,
    }
