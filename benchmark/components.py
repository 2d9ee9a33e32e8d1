"""Build a config's ``_target_`` with Hydra, reporting failures in one line."""

from __future__ import annotations

import inspect
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import get_object, instantiate

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
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc).splitlines()[0]
        raise UserError(f"{label} ({spec['_target_']}): {detail}") from None


def _accepted(target: str, offered: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(get_object(target)).parameters
    except (ImportError, ValueError, TypeError):
        return {}  # instantiate reports an unimportable target itself
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in offered.items() if takes_any or k in params}
