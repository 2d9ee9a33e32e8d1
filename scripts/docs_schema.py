"""The config schemas as the docs show them: types, bounds, defaults, descriptions.

Helpers of ``scripts/docs_reference.py`` (``docs/reference.md`` and ``--help``): they read
``BenchmarkConfig``, each part group's settings table and the target classes' defaults,
and lay them out as Markdown tables.
"""

from __future__ import annotations

import inspect
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

CONF = Path(__file__).resolve().parents[1] / "conf"
PARTS = ("policy", "summarizer", "answerer", "judge")


def benchmark_config() -> type[BaseModel]:
    """The root schema: the one import of a module whose path the package layout moves."""
    from benchmark.config.schema import BenchmarkConfig

    return BenchmarkConfig


def part_tables() -> dict[str, dict[str, type[BaseModel]]]:
    """Each part group's settings, keyed by target class (``<package>/config.py``)."""
    from benchmark.answerer.config import AnswererConfig
    from benchmark.judge.config import JudgeConfig
    from benchmark.policy.config import PolicyConfig
    from benchmark.probe.config import WRITERS
    from benchmark.summarizer.config import SummarizerConfig

    return {
        "policy": dict(PolicyConfig.targets),
        "summarizer": dict(SummarizerConfig.targets),
        "answerer": dict(AnswererConfig.targets),
        "judge": dict(JudgeConfig.targets),
        "probe.writer": dict(WRITERS),
    }


# -- schemas ------------------------------------------------------------------------------


def type_name(tp: Any) -> str:
    """A type as a reader writes its values."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin in (list, tuple, set):
        return f"list[{type_name(args[0])}]" if args else "list"
    if origin is dict:
        return f"dict[{type_name(args[0])}, {type_name(args[1])}]" if args else "dict"
    if tp is type(None):
        return "null"
    if tp is typing.Any:
        return "any"
    return getattr(tp, "__name__", str(tp))


def bounds(field: FieldInfo) -> str:
    """A field's numeric and length bounds (its own, and its annotated type's)."""
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "length ≥"}
    signs["max_length"] = "length ≤"
    found = []
    for item in field.metadata:
        for attr, sign in signs.items():
            value = getattr(item, attr, None)
            if value is not None and abs(value) < 2**62:  # a seed's 64-bit range says nothing
                found.append(f"{sign} {value:,}" if isinstance(value, int) else f"{sign} {value}")
    return ", ".join(found)


def default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(its keys)"
    if value is None:
        return "`null`"
    if isinstance(value, list):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    return f"`{value}`"


def sub_models(tp: Any) -> list[type[BaseModel]]:
    """The pydantic models a field's type holds (``X``, ``X | None``, ``X | Y``)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for a in typing.get_args(tp) for m in sub_models(a)]


def doc_line(obj: Any) -> str:
    """The first paragraph of a docstring, on one line."""
    text = inspect.getdoc(obj) or ""
    return " ".join(text.split("\n\n")[0].split()).replace("``", "`")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def key_rows(model: type[BaseModel], prefix: str, values: Any = None) -> list[str]:
    """One row per key. The default shown is the composed ``conf/`` value where ``values``
    (that part of the composed default config) has one, else the schema's."""
    rows = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        shown = default(field)
        if isinstance(values, dict) and key in values and not sub_models(field.annotation):
            shown = "required" if values[key] == "???" else show(values[key])
        text = field.description or doc_line(_first_model(field.annotation))
        rows.append(
            f"| `{prefix}{key}` | {type_name(field.annotation)} | {shown} "
            f"| {bounds(field)} | {cell(text)} |"
        )
    return rows


def show(value: Any) -> str:
    """A config value as a reader types it."""
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    if isinstance(value, dict):
        return "`{}`" if not value else "(see conf/)"
    return f"`{value}`"


def _first_model(tp: Any) -> Any:
    models = sub_models(tp)
    return models[0] if models else None


# Which composed config shows a model's defaults: the default job's, or the one that
# selects the model (an option of its group, an experiment).
COMPOSED_WITH = {
    "FileTranscripts": ["transcript=files"],
    "AuditConfig": ["+audit=judge"],
    "TaskConfig": ["+experiment=task_success"],
    "RoleConfig": ["+experiment=task_success"],
}


def composed(overrides: tuple[str, ...] = ()) -> dict[str, Any]:
    """The default config composed from conf/ (with ``overrides``), interpolations resolved."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(overrides))
    data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    assert isinstance(data, dict)
    return data


def model_sections(
    model: type[BaseModel], prefix: str, heading: str, out: list[str], values: Any = None
) -> None:
    """A table of ``model``'s keys, then one section per model under it (depth first)."""
    if values is None:
        values = composed()
    out += [f"### {heading}", ""]
    if doc_line(model):
        out += [doc_line(model), ""]
    out += ["| key | type | default | bounds | description |", "|---|---|---|---|---|"]
    out += key_rows(model, prefix, values)
    out.append("")
    for name, field in model.model_fields.items():
        if name in PARTS:
            continue  # the parts' options: by target class, below
        models = sub_models(field.annotation)
        for sub in models:
            label = f"`{prefix}{name}`" + (f" ({sub.__name__})" if len(models) > 1 else "")
            if sub.__name__ in COMPOSED_WITH:
                whole = composed(tuple(COMPOSED_WITH[sub.__name__]))
                sub_values = _at(whole, f"{prefix}{name}")
            else:
                sub_values = values.get(name) if isinstance(values, dict) else None
            model_sections(sub, f"{prefix}{name}.", label, out, sub_values or {})


def _at(data: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        data = data.get(part, {}) if isinstance(data, dict) else {}
    return data


def target_defaults(target: str) -> dict[str, Any]:
    """The defaults of a target class's ``__init__`` (what applies when config omits one)."""
    from hydra.utils import get_object

    try:
        params = inspect.signature(get_object(target)).parameters
    except (ImportError, ValueError, TypeError):
        return {}
    return {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}


def part_sections(out: list[str]) -> None:
    out += ["## Parts: each target's options", ""]
    out.append(
        "A part group (`policy`, `summarizer`, `answerer`, `judge`, and `probe.writer`) "
        "names a class in `_target_`; its other keys are that class's options, checked "
        "against the table below before any part is built. Options a config leaves out "
        "take the class's own default. *Built with* lists the job's shared objects the "
        "class receives (never set in config)."
    )
    out.append("")
    for group, table in part_tables().items():
        using = _options_by_target(group)
        for target, settings in table.items():
            out += [f"### `{group}`: `{target}`", ""]
            if doc_line(_object(target)):
                out += [doc_line(_object(target)), ""]
            if using.get(target):
                names = ", ".join(f"`{o}`" for o in using[target])
                out += [f"Options using it: {names}.", ""]
            if settings.needs:
                out += [f"Built with: {', '.join(settings.needs)}.", ""]
            defaults = target_defaults(target)
            if settings.model_fields:
                out += ["| key | type | default | bounds |", "|---|---|---|---|"]
                for name, field in settings.model_fields.items():
                    value = defaults.get(name, PydanticUndefined)
                    shown = "required" if value is PydanticUndefined else f"`{value}`"
                    row = (
                        f"| `{name}` | {type_name(field.annotation)} | {shown} | {bounds(field)} |"
                    )
                    out.append(row)
                out.append("")


def _object(target: str) -> Any:
    from hydra.utils import get_object

    try:
        return get_object(target)
    except ImportError:
        return None


def _options_by_target(group: str) -> dict[str, list[str]]:
    """Target class (as defined) -> the options of ``group`` in conf/ naming it."""
    import yaml

    found: dict[str, list[str]] = {}
    folder = CONF / ("probe" if group == "probe.writer" else group)
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        spec = data.get("writer") if group == "probe.writer" else data
        target = spec.get("_target_") if isinstance(spec, dict) else None
        obj = _object(target) if target else None
        if obj is not None:
            found.setdefault(f"{obj.__module__}.{obj.__qualname__}", []).append(path.stem)
    return found
