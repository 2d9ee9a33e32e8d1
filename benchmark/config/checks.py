"""One-line reports of bad config: pydantic errors, non-finite numbers, unwritable paths,
endpoints, and Hydra's own composition errors (a misspelled key), each naming the key.

Every message starts with ``config key '<key>':`` (or names the override) and says what
is allowed; a value that may hold a credential is never repeated.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tempfile
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from benchmark.config.validators import NO_ECHO
from benchmark.errors import UserError

# The tags pydantic puts in a discriminated union's error location (transcript kinds).
UNION_TAGS = ("synthetic", "files")
# Config groups whose options may carry an LLM endpoint (at any depth: panel members,
# probe.writer).
ENDPOINT_GROUPS = ("policy", "summarizer", "answerer", "judge", "probe")


def closest(name: str, options: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the nearest of ``options``, or ``""`` when none is near."""
    match = difflib.get_close_matches(name, sorted(set(options)), n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


def validation_message(
    exc: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """The first error of ``exc`` as ``config key '<prefix>.<loc>': <what is allowed> (got x)``.

    ``model`` (the validated class) lets an unknown key name the closest known one.
    """
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"] if p not in UNION_TAGS]
    key = ".".join([prefix, *loc] if prefix else loc) or prefix or "config"
    kind, ctx = err["type"], err.get("ctx") or {}
    msg = err["msg"].removeprefix("Value error, ")
    got = err.get("input")
    if kind == "extra_forbidden":
        known = _fields_at(model, err["loc"][:-1]) if model else []
        msg = f"unknown key{closest(loc[-1], known) if loc else ''}"
        if known:
            msg += f"; known keys: {', '.join(known)}"
    elif kind in _BOUNDS:
        symbol, bound = _BOUNDS[kind]
        limit = ctx.get(bound)
        msg = f"must be {symbol} {f'{limit:,}' if isinstance(limit, int) else limit}"
    elif kind == "finite_number":
        msg = "must be a finite number"
    elif kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
        msg = "must not be empty"
    elif kind in ("string_too_long", "too_long"):
        unit = "characters" if kind == "string_too_long" else "entries"
        size = f" (got {len(got):,})" if isinstance(got, str | list | dict) else ""
        return f"config key '{key}': must be at most {ctx.get('max_length')} {unit}{size}"
    else:
        msg = msg.replace("Input should be", "must be")
    shown = kind not in (NO_ECHO, "extra_forbidden") and _short_scalar(got)
    return f"config key '{key}': {msg}{f' (got {got!r})' if shown else ''}"


# pydantic's bound errors: type -> (symbol, its ``ctx`` key)
_BOUNDS = {
    "greater_than": (">", "gt"),
    "greater_than_equal": (">=", "ge"),
    "less_than": ("<", "lt"),
    "less_than_equal": ("<=", "le"),
}


def _short_scalar(value: object) -> bool:
    if isinstance(value, int) and not -(10**80) < value < 10**80:
        return False  # str() of a 4,301-digit int raises (Python's int-to-text limit)
    return isinstance(value, int | float | str | bool) and len(str(value)) < 80


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at ``loc`` under ``model`` ([] when not a model)."""
    current: Any = model
    for part in loc:
        models = _models_in(current)
        if part in UNION_TAGS:
            current = next((m for m in models if part in _tags(m)), None)
            continue
        fields = [m.model_fields[part].annotation for m in models if part in m.model_fields]
        if not fields:
            return []
        current = fields[0]
    models = _models_in(current)
    return sorted({f.alias or n for m in models for n, f in m.model_fields.items()})


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation admits (through Optional, unions, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in _models_in(a)]
    return []


def _tags(model: type[BaseModel]) -> tuple[Any, ...]:
    kind = model.model_fields.get("kind")
    return typing.get_args(kind.annotation) if kind else ()


def check_finite(data: Any, key: str = "") -> None:
    """Every float anywhere in the config is finite: NaN passes ``< 0`` and ``> 1`` checks."""
    if isinstance(data, float) and not math.isfinite(data):
        raise UserError(f"config key '{key or 'config'}': must be a finite number (got {data})")
    if isinstance(data, Mapping):
        for name, value in data.items():
            check_finite(value, f"{key}.{name}" if key else str(name))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            check_finite(value, f"{key}.{i}")


def check_endpoints(data: Mapping[str, Any]) -> None:
    """Validate every LLM endpoint of the config before any part is built, naming its key.

    An endpoint without a ``model`` is an overlay laid over others' (a judge panel's
    ``endpoint``); only the fields it sets (null: left alone) are checked.
    """
    found = _endpoints(data)
    if not found:
        return  # an offline config does not load the LLM stack
    from benchmark.llm.endpoint import Endpoint

    for key, node in found:
        given = dict(node)
        if "model" not in given:
            given = {k: v for k, v in given.items() if v is not None}
            given.update(name="overlay", model="overlay")
        given.setdefault("name", given.get("model") or "")
        try:
            Endpoint.model_validate(given)
        except ValidationError as exc:
            raise UserError(validation_message(exc, key, Endpoint)) from None


def _endpoints(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    found: list[tuple[str, Mapping[str, Any]]] = []

    def walk(node: Any, key: str) -> None:
        if not isinstance(node, Mapping):
            return
        for name, value in node.items():
            sub = f"{key}.{name}"
            if name == "endpoint" and isinstance(value, Mapping):
                found.append((sub, value))
            else:
                walk(value, sub)

    for group in ENDPOINT_GROUPS:
        walk(data.get(group), group)
    return found


def check_writable(key: str, path: str | os.PathLike[str]) -> None:
    """The folder ``path`` exists and is writable, or can be created: checked by writing
    (root passes every permission check) in the nearest existing folder, which is left as
    it was."""
    target = Path(path).expanduser()
    existing = target
    while not _exists(existing) and existing != existing.parent:
        existing = existing.parent
    check_name_lengths(key, target, existing)
    if not existing.is_dir():
        raise UserError(
            f"config key '{key}': '{path}' cannot be a folder: '{existing}' is a file; "
            "give a writable folder"
        )
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise UserError(
            f"config key '{key}': cannot write in '{existing}' ({exc.strerror or exc}); "
            "give a writable folder"
        ) from None


def _exists(path: Path) -> bool:
    """``path.exists()``, False too for a name too long to look up (which it raises)."""
    try:
        return path.exists()
    except OSError:
        return False


def check_name_lengths(key: str, target: Path, existing: Path) -> None:
    """The names ``target`` adds below its nearest ``existing`` folder fit the file system
    there (ENAMETOOLONG would come only when the job first writes)."""
    try:
        name_max = os.pathconf(existing if existing.is_dir() else existing.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        return
    missing = target.parts[len(existing.parts) :] if target != existing else (target.name,)
    longest = max(missing, key=lambda n: len(os.fsencode(n)), default="")
    if len(os.fsencode(longest)) > name_max:
        raise UserError(
            f"config key '{key}': a name in it is {len(os.fsencode(longest))} bytes long, more "
            f"than the {name_max} this file system allows; give a shorter {key}"
        )


def override_error(exc: Exception) -> str | None:
    """One line for Hydra's error on a command-line override (a misspelled or unknown key,
    a bad value for a config node, an unparsable override); None for any other error."""
    from hydra.errors import ConfigCompositionException, OverrideParseException

    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if isinstance(exc, OverrideParseException):
        said = lines[0] if lines else "bad syntax"
        key, _, value = str(exc.override).partition("=")
        if (
            value
            and value.isprintable()
            and re.fullmatch(r"[+~]*[\w./@-]+", key)
            and value[0] not in "'\""
        ):
            said += f"; quote a value holding brackets, braces, commas or symbols: {key}='...'"
        return f"cannot parse the override '{exc.override}': {said}"
    if not isinstance(exc, ConfigCompositionException):
        return None
    unknown = _unknown_key(exc.__cause__)
    if unknown is not None:
        return unknown
    first = lines[0] if lines else "cannot compose the config"
    for pattern, template in _COMPOSITION_ERRORS:
        found = re.search(pattern, first)
        if found:
            return template.format(*found.groups())
    if exc.__cause__ is not None:
        key = getattr(exc.__cause__, "full_key", None) or first.rsplit(" ", 1)[-1]
        detail = [x.strip() for x in str(exc.__cause__).strip().splitlines() if x.strip()]
        said = detail[0] if detail else first
        if said.startswith("Cannot merge DictConfig"):
            said = f"holds keys, not a list or a value; set one of them ({key}.<name>=...)"
        return f"config key '{key}': {said}"
    return " ".join(lines)  # Hydra's own words, on one line


# Hydra's composition errors that name a key in their first line -> our one line.
_COMPOSITION_ERRORS = (
    (
        r"An item is already at '([^']+)'",
        "config key '{0}': already set; drop the + to override it (++ adds or overrides)",
    ),
    (
        r"Could not delete from config. '([^']+)' does not exist",
        "config key '{0}': cannot delete it, no such key",
    ),
    (
        r"Could not delete from config. The value of '([^']+)'",
        "config key '{0}': cannot delete it, the value given is not its value",
    ),
    (
        r"Ambiguous value for argument '(([^'=]+)=[^']*)'",
        "config key '{1}': '{0}' is ambiguous: write [a,b] for a list, quote it for a "
        "string, or add -m to sweep over the values",
    ),
)


def _unknown_key(cause: BaseException | None) -> str | None:
    """A key the config does not have, with the closest one it has."""
    from omegaconf import DictConfig
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError

    if not isinstance(cause, ConfigAttributeError | ConfigKeyError) or not cause.full_key:
        return None
    key = str(cause.full_key)
    parent = cause.parent_node
    known = [str(k) for k in parent] if isinstance(parent, DictConfig) else []
    hint = closest(key.rsplit(".", 1)[-1], known)
    if not hint and "." in key and 0 < len(known) <= 20:
        hint = f" (known keys here: {', '.join(sorted(known))})"
    return f"config key '{key}': unknown key{hint}; to add a new key, write +{key}=..."
