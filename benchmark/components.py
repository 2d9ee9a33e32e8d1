"""Build a config's ``_target_`` with Hydra, reporting failures in one line."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Mapping
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import get_object, instantiate
from pydantic import ValidationError

from benchmark.config_checks import closest, validation_message
from benchmark.errors import UserError


def instantiate_target(label: str, spec: dict[str, Any], **inject: Any) -> Any:
    """``instantiate(spec)``; errors become a ``UserError`` naming ``label``.

    ``inject`` offers shared objects (a summarizer, the usage ledger); each is
    passed only to targets whose signature takes a parameter of that name.
    """
    try:
        accepted = _accepted(spec["_target_"], inject)
        return instantiate(spec, _convert_="all", **accepted)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, UserError):
            raise cause from None  # already names what is wrong (e.g. a missing key)
        detail = _detail(exc, spec["_target_"], set(inject))
        raise UserError(f"{label} ({spec['_target_']}): {detail}") from None


def _detail(exc: InstantiationException, target: str, injected: set[str]) -> str:
    """One line on why a target could not be built: an unknown option names the closest."""
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return validation_message(cause)
    if isinstance(cause, ImportError) or "Error locating target" in str(exc):
        return "cannot import this _target_ (give a module path and a name in it)"
    if isinstance(cause, TypeError):
        unknown = re.search(r"unexpected keyword argument '(\w+)'", str(cause))
        if unknown:
            params = _parameters(target) or {}
            named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            known = [n for n, p in params.items() if p.kind in named and n not in injected]
            hint = closest(unknown[1], known)
            return f"unknown option '{unknown[1]}'{hint}; it takes: {', '.join(sorted(known))}"
    text = f"{type(cause).__name__}: {cause}" if cause else str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def _parameters(target: str) -> Mapping[str, inspect.Parameter] | None:
    """The target's parameters; None when it cannot be imported or inspected (reported
    by ``instantiate`` in one line, so Hydra's own log of the failure is held back)."""
    hydra_log = logging.getLogger("hydra.utils")
    was_disabled, hydra_log.disabled = hydra_log.disabled, True
    try:
        return inspect.signature(get_object(target)).parameters
    except (ImportError, ValueError, TypeError):
        return None
    finally:
        hydra_log.disabled = was_disabled


def _accepted(target: str, offered: dict[str, Any]) -> dict[str, Any]:
    params = _parameters(target)
    if params is None:
        return {}  # instantiate reports an unimportable target itself
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in offered.items() if takes_any or k in params}
