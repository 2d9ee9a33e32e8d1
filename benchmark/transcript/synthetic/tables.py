"""Text tables: the prose of scenarios and features, kept as data beside the code that uses it.

A table is plain text in sections::

    [kind]
    key: a template with {names} filled from the values of one scenario
    alternative: a key given more than once holds a list
      an indented line continues the value above it (joined with a space)

Templates use :meth:`str.format_map`, so a value is any object with a ``str``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.topics import Decision


class Entry:
    """One section of a table: each key holds one or more templates."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}

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


def parse(text: str) -> dict[str, Entry]:
    table: dict[str, Entry] = {}
    entry, key = Entry(), ""
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("["):
            entry = table.setdefault(line.strip()[1:-1], Entry())
        elif line[0].isspace():
            entry.fields[key][-1] += " " + line.strip()
        else:
            key, _, value = line.partition(":")
            entry.fields.setdefault(key, []).append(value.strip())
    return table


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
