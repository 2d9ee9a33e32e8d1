"""A package's public names, imported on first use (PEP 562).

A package ``__init__`` that imported every part eagerly would load the whole LLM stack
(``openai``, ``aiohttp``: about a second) for an offline job that never calls a model.
With :func:`exports`, ``from benchmark.policy import Codex`` still works, but importing
``benchmark.policy.anchor_index`` loads only what that module needs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``where`` is read
    from its module (relative to the package, e.g. ``".llm"``) the first time it is asked for."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is direct
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
