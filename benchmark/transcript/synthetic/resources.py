"""The generator's data files under ``data/``: its tables, word lists and fictional sources.

They are package data read through :mod:`importlib.resources`, so the generator works from
a wheel as well as from a checkout; each file is read and parsed once per process. Callers
must not change what they get back (it is shared).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from random import Random
from typing import Any

import yaml


@cache
def text(name: str) -> str:
    """The file ``data/<name>`` as text."""
    return (files(__package__) / "data" / name).read_text(encoding="utf-8")


@cache
def yaml_data(name: str) -> Any:
    """The YAML file ``data/<name>``, parsed."""
    return yaml.safe_load(text(name))


def render(name: str, **values: Any) -> str:
    """The template ``data/<name>`` (a fictional file) filled with :meth:`str.format`."""
    return text(name).format(**values)


class Wording:
    """The message templates in ``data/<name>`` (or in its ``section``): each name maps to
    one :meth:`str.format` template or to a list of alternatives the caller's RNG picks from."""

    def __init__(self, name: str, section: str = "") -> None:
        data = yaml_data(name)
        self._templates: dict[str, Any] = data[section] if section else data

    def __call__(self, key: str, /, **values: Any) -> str:
        """The template ``key``, filled."""
        return self._templates[key].format(**values)

    def pick(self, rng: Random, key: str, /, **values: Any) -> str:
        """One of the alternatives under ``key`` (one ``rng.choice`` draw), filled."""
        return rng.choice(self._templates[key]).format(**values)
