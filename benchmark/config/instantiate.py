"""Configured parts: each target's typed options (``Settings``), the config group that
names one (``ComponentConfig``), and building it with Hydra.

A target's ``Settings`` model lists its options with their types and, in ``needs``,
the job's shared objects it takes (``ledger``, ``cache``, ``summarizer``). The
options are checked when the config is validated, before any part is built, and the
builder passes a target exactly the shared objects it declares. A target with no
``Settings`` (your own class) gets its options as written and the shared objects its
class lists in a ``needs`` attribute (none when it has none).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from hydra.errors import InstantiationException
from hydra.utils import get_object, instantiate
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from benchmark.config.checks import closest, validation_message
from benchmark.errors import UserError

# Hydra's own keys in a spec (``_recursive_``, ``_partial_``, ...): not options.
_HYDRA_KEY = re.compile(r"^_\w+_$")


class Settings(BaseModel):
    """A target's options and their types. Fields have no defaults: only the options a
    config gives are checked and passed, so the target's own defaults apply to the rest."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    target: ClassVar[str]  # the class, as ``module.Class`` where it is defined
    needs: ClassVar[tuple[str, ...]] = ()  # the shared objects it is built with


def settings(target: str, needs: tuple[str, ...] = (), **fields: Any) -> type[Settings]:
    """The ``Settings`` of ``target`` (``module.Class``): each option's type, and ``needs``."""
    name = target.rsplit(".", 1)[-1] + "Settings"
    model = create_model(name, __base__=Settings, **{k: (t, ...) for k, t in fields.items()})
    model.target, model.needs = target, needs
    return model


def by_target(*models: type[Settings]) -> dict[str, type[Settings]]:
    """A group's settings table, keyed by the class each model configures."""
    return {model.target: model for model in models}


class ComponentConfig(BaseModel):
    """A config group naming a swappable part: ``name``, ``_target_`` and its options.

    A subclass per group gives ``targets``: the ``Settings`` of each target it knows.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    targets: ClassVar[Mapping[str, type[Settings]]] = {}

    name: str = Field(min_length=1, description="label of the part (run names, tags)")
    target: str = Field(
        alias="_target_", min_length=1, description="the class built, as module.Class"
    )

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def check(self, group: str) -> None:
        """Refuse an unknown option (naming the closest) or a wrong type, before building."""
        options(f"{group} '{self.name}'", group, self.spec(), self.targets)

    def spec(self) -> dict[str, Any]:
        return {"_target_": self.target, **self.kwargs}


def options(
    label: str, key: str, spec: Mapping[str, Any], table: Mapping[str, type[Settings]]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The spec's options as its target's ``Settings`` validates them, and what it needs.

    ``key`` prefixes the config key an error names (``policy``, ``judge.members.a``).
    """
    target = spec["_target_"]
    cls = _locate(target)
    if cls is None:
        raise UserError(
            f"{label} ({target}): cannot import this _target_ (give a module path and a name in it)"
        )
    given = {k: v for k, v in spec.items() if k != "_target_" and not _HYDRA_KEY.match(k)}
    model = table.get(f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', '')}")
    if model is None:
        return given, tuple(getattr(cls, "needs", ()))
    for name in given:
        if name in model.needs:
            raise UserError(
                f"config key '{key}.{name}': given by the job, not by config "
                f"({model.target} is built with the job's {', '.join(model.needs)})"
            )
    known = sorted(model.model_fields)
    for name in given:
        if name not in known:
            raise UserError(
                f"config key '{key}.{name}': unknown option '{name}'{closest(name, known)}; "
                f"{label} takes: {', '.join(known) or 'no options'}"
            )
    checked = model.model_construct()  # no defaults: each option given is checked alone
    try:
        for name, value in given.items():
            model.__pydantic_validator__.validate_assignment(checked, name, value)
    except ValidationError as exc:
        raise UserError(validation_message(exc, prefix=key, model=model)) from None
    return checked.model_dump(include=set(given)), model.needs


def instantiate_target(
    label: str,
    key: str,
    spec: Mapping[str, Any],
    table: Mapping[str, type[Settings]],
    shared: Mapping[str, Any],
) -> Any:
    """Build ``spec`` with the shared objects its target needs (of those ``shared`` holds:
    one left out keeps the target's default); errors name ``label``."""
    given, needs = options(label, key, spec, table)
    hydra_keys = {k: v for k, v in spec.items() if _HYDRA_KEY.match(k)}
    try:
        return instantiate(
            {**hydra_keys, **given},
            _convert_="all",
            **{name: shared[name] for name in needs if name in shared},
        )
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, UserError):
            raise cause from None  # already names what is wrong (e.g. a missing key)
        raise UserError(f"{label} ({spec['_target_']}): {_detail(exc)}") from None


def _detail(exc: InstantiationException) -> str:
    """One line on why a target could not be built."""
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return validation_message(cause)
    if isinstance(cause, TypeError):
        unknown = re.search(r"unexpected keyword argument '(\w+)'", str(cause))
        if unknown:
            return f"unknown option '{unknown[1]}'"
    text = f"{type(cause).__name__}: {cause}" if cause else str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def _locate(target: str) -> Any:
    """The object ``target`` names; None when it cannot be imported (Hydra's own log of
    the failure is held back: the caller reports it in one line)."""
    hydra_log = logging.getLogger("hydra.utils")
    was_disabled, hydra_log.disabled = hydra_log.disabled, True
    try:
        return get_object(target)
    except Exception:  # noqa: BLE001 - any failure to import is the same one-line error
        return None
    finally:
        hydra_log.disabled = was_disabled
