"""The generator's data files under ``data/``: its tables, word lists and fictional sources.

They are package data read through :mod:`importlib.resources`, so the generator works from
a wheel as well as from a checkout; each file is read and parsed once per process. Callers
must not change what they get back (it is shared).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
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
