"""Project themes: the fictional codebases a generated session works on.

Each theme gives a domain (entities with typed fields), candidate package
names, an external vendor API and CLI verbs, so that different seeds yield
sessions about visibly different projects rather than renamed copies. The
themes and names themselves are data (``data/themes.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import benchmark.transcript.synthetic.resources as resources


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # one of: str, int, float, bool, datetime, date


@dataclass(frozen=True)
class Entity:
    name: str  # snake_case singular
    plural: str
    fields: tuple[Field, ...]

    @property
    def cls(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True)
class Theme:
    key: str
    summary: str  # "a service that ..." used in prose
    packages: tuple[str, ...]
    vendor: str  # external API the client talks to
    entities: tuple[Entity, ...]
    commands: tuple[str, ...]  # CLI sub-commands
    milestone: str  # what the release is about


def _entity(spec: dict[str, Any]) -> Entity:
    fields = tuple(Field(name, kind) for name, kind in spec["fields"].items())
    return Entity(spec["name"], spec["plural"], fields)


def _theme(spec: dict[str, Any]) -> Theme:
    return Theme(
        key=spec["key"],
        summary=spec["summary"],
        packages=tuple(spec["packages"]),
        vendor=spec["vendor"],
        entities=tuple(_entity(e) for e in spec["entities"]),
        commands=tuple(spec["commands"]),
        milestone=spec["milestone"],
    )


_DATA = resources.yaml_data("themes.yaml")
THEMES: tuple[Theme, ...] = tuple(_theme(t) for t in _DATA["themes"])
AGENT_NAMES: tuple[str, ...] = tuple(_DATA["agent_names"])
PYTHON_VERSIONS: tuple[str, ...] = tuple(_DATA["python_versions"])
DEVELOPERS: tuple[str, ...] = tuple(_DATA["developers"])
