"""Line-oriented Python source writer that records functions for later edits."""

from __future__ import annotations

import random
import re

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Func, SourceFile
from benchmark.transcript.synthetic.vocab import Entity, Field

_VALUES = resources.yaml_data("field_values.yaml")
STATUSES: tuple[str, ...] = tuple(_VALUES["statuses"])
PEOPLE: tuple[str, ...] = tuple(_VALUES["people"])
WORDS: tuple[str, ...] = tuple(_VALUES["words"])
CODE_PREFIX: tuple[str, ...] = tuple(_VALUES["code_prefix"])
CODE_FIELDS: tuple[str, ...] = tuple(_VALUES["code_fields"])


def literal(f: Field, rng: random.Random) -> str:
    """A plausible Python literal for a field, used in tests, fixtures and sample data."""
    n, t = f.name, f.type
    if t == "int":
        if n.endswith("_cents"):
            return str(rng.choice((1250, 4900, 12500, 99900, 250000, 7450)))
        if n.endswith("_id"):
            return str(rng.randint(1, 90))
        if n.endswith("_year"):
            return str(rng.randint(1960, 2023))
        return str(rng.randint(2, 60))
    if t == "float":
        return f"{rng.randint(5, 990) / 10}"
    if t == "bool":
        return rng.choice(("True", "False"))
    if t == "datetime":
        return (
            f"datetime(2024, {rng.randint(1, 12)}, {rng.randint(1, 28)}, {rng.randint(0, 23)}, "
            f"{rng.choice((0, 15, 30, 45))}, tzinfo=timezone.utc)"
        )
    if t == "date":
        return f"date(2024, {rng.randint(1, 12)}, {rng.randint(1, 28)})"
    return f'"{string_value(f, rng)}"'


def string_value(f: Field, rng: random.Random) -> str:
    n = f.name
    if "email" in n:
        return f"{rng.choice(PEOPLE)}.{rng.choice(WORDS)}@example.org"
    if n == "currency":
        return rng.choice(("EUR", "USD", "GBP", "CHF"))
    if n in ("status", "level"):
        return rng.choice(STATUSES[:6]) if n == "status" else rng.choice(("info", "warn", "error"))
    if n in ("country",):
        return rng.choice(("PT", "DE", "NL", "FR", "IE", "ES"))
    if n in ("timezone",):
        return rng.choice(("Europe/Lisbon", "Europe/Berlin", "America/Chicago"))
    if "url" in n or n == "hostname" or n == "host":
        return f"https://{rng.choice(WORDS)}.example/{rng.choice(WORDS)}"
    if n in CODE_FIELDS or n.endswith("_code"):
        return f"{rng.choice(CODE_PREFIX)}-{rng.randint(100, 9999)}"
    if n in ("full_name", "name", "author", "company"):
        return f"{rng.choice(PEOPLE).capitalize()} {rng.choice(WORDS).capitalize()}"
    return f"{rng.choice(WORDS)} {rng.choice(WORDS)}"


class Writer:
    """Accumulates source lines; ``func`` emits a def and records it as a :class:`Func`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.out: list[str] = []
        self.funcs: list[Func] = []
        self.consts: dict[str, str] = {}
        self.anchors: dict[str, str] = {}
        self.payload_keys: list[str] = []

    def add(self, *lines: str) -> None:
        self.out.extend(lines)

    def blank(self, count: int = 1) -> None:
        self.out.extend([""] * count)

    def const(self, name: str, value: str) -> None:
        self.consts[name] = value
        self.out.append(f"{name} = {value}")

    def func(
        self,
        name: str,
        params: list[str],
        ret: str,
        doc: str,
        body: list[str],
        *,
        owner: str = "",
        decorators: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
    ) -> Func:
        indent = "    " if owner else ""
        all_params = (["self"] if owner else []) + params
        arrow = f" -> {ret}" if ret else ""
        def_line = f"{indent}def {name}({', '.join(all_params)}){arrow}:"
        doc_line = f'{indent}    """{doc}"""'
        for deco in decorators:
            self.out.append(f"{indent}{deco}")
        self.out.append(def_line)
        self.out.append(doc_line)
        self.out.extend(f"{indent}    {line}" if line else "" for line in body)
        parsed = [(p.split(":")[0].split("=")[0].strip(), p) for p in params]
        func = Func(
            name=name,
            qual=f"{owner}.{name}" if owner else name,
            def_line=def_line,
            doc_line=doc_line,
            params=parsed,
            ret=ret,
            indent=indent + "    ",
            tags=tags,
        )
        self.funcs.append(func)
        return func

    def snippet(
        self,
        template: str,
        *,
        owner: str = "",
        indent: str = "",
        tags: dict[str, tuple[str, ...]] | None = None,
        record: bool = True,
        **values: object,
    ) -> None:
        """Append a source template from ``data/`` filled with ``values`` (:meth:`str.format`).

        Every ``def`` in it except dunder methods is recorded as a :class:`Func`, and every
        top-level ``UPPER_CASE = value`` as a constant, as :meth:`func` and :meth:`const`
        would, so scenarios can edit them later (``record=False``: no functions are recorded);
        ``tags`` maps a function name to its tags.
        A method's owner is the last ``class`` line of the template, else ``owner``. A line
        holding only a placeholder that renders empty is left out.
        """
        lines = [f"{indent}{line}" if line else "" for line in _fill(template, values)]
        for i, line in enumerate(lines):
            stripped = line.lstrip()
            pad = line[: len(line) - len(stripped)]
            if stripped.startswith("class "):
                owner = re.split(r"[(:]", stripped[6:], maxsplit=1)[0]
            if not pad and re.match(r"[A-Z][A-Z0-9_]* = ", line):
                name, _, value = line.partition(" = ")
                self.consts[name] = value
            if record and stripped.startswith("def ") and not stripped.startswith("def __"):
                self.funcs.append(_recorded(line, lines[i + 1], owner if pad else "", tags or {}))
        self.out.extend(lines)

    def header_snippet(self, template: str, **values: object) -> None:
        """A module's head from a template: its docstring paragraph, then import groups.

        Groups are separated by blank lines and sorted the way isort does it; a group
        whose lines all render empty is dropped.
        """
        doc, *groups = template.format(**values).strip("\n").split("\n\n")
        self.add(doc, "")
        self._imports([[line for line in group.split("\n") if line] for group in groups])

    def _imports(self, groups: list[list[str]]) -> None:
        self.add(*import_block(groups).split("\n"))
        self.blank(2)

    def build(self, entity: Entity | None = None, tests: list[str] | None = None) -> SourceFile:
        text = "\n".join(self.out).rstrip() + "\n"
        return SourceFile(
            path=self.path,
            text=text,
            funcs=self.funcs,
            consts=self.consts,
            tests=tests or [],
            entity=entity,
            payload_keys=self.payload_keys,
            anchors=self.anchors,
        )


STDLIB = frozenset(resources.yaml_data("stdlib.yaml"))


def _import_order(line: str) -> tuple[bool, str]:
    return line.startswith("from "), line.split()[1]


def import_block(groups: list[list[str]]) -> str:
    """Import groups, each sorted the way isort does it, with a blank line between groups."""
    return "\n\n".join("\n".join(sorted(group, key=_import_order)) for group in groups if group)


def add_import(text: str, line: str, first_party: str) -> str:
    """Insert an import line into its isort group (stdlib, third party, first party)."""
    if any(existing.startswith(line) for existing in text.splitlines()):
        return text
    marker = "from __future__ import annotations\n\n"
    start = text.index(marker) + len(marker)
    end = text.index("\n\n\n", start)
    groups = [g.splitlines() for g in text[start:end].split("\n\n") if g.strip()]

    def group_of(entry: str) -> int:
        root = entry.split()[1].split(".")[0]
        return 0 if root in STDLIB else 2 if root == first_party else 1

    rank = group_of(line)
    for group in groups:
        if group_of(group[0]) == rank:
            group.append(line)
            break
    else:
        groups.insert(sum(1 for group in groups if group_of(group[0]) < rank), [line])
    return text[:start] + import_block(groups) + text[end:]


_BARE_PLACEHOLDER = re.compile(r" *\{[^{}]*\}")


def _fill(template: str, values: dict[str, object]) -> list[str]:
    """The template's lines filled in; a bare placeholder line that renders empty is dropped."""
    lines: list[str] = []
    for line in template.rstrip("\n").split("\n"):
        text = line.format(**values)
        if text or not _BARE_PLACEHOLDER.fullmatch(line):
            lines.extend(text.split("\n"))
    return lines


def _split_params(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (the inverse of ``", ".join``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [part for part in [*parts, text[start:].strip()] if part]


def _recorded(def_line: str, doc_line: str, owner: str, tags: dict[str, tuple[str, ...]]) -> Func:
    """The :class:`Func` for one rendered ``def`` line (and the docstring line under it)."""
    stripped = def_line.lstrip()
    name = stripped[4 : stripped.index("(")]
    head, arrow, ret = stripped.rpartition(") -> ")
    if not arrow:
        head, ret = stripped.rstrip(":").removesuffix(")"), ""
    params = _split_params(head[head.index("(") + 1 :])
    if owner and params[:1] == ["self"]:
        params = params[1:]
    return Func(
        name=name,
        qual=f"{owner}.{name}" if owner else name,
        def_line=def_line,
        doc_line=doc_line,
        params=[(p.split(":")[0].split("=")[0].strip(), p) for p in params],
        ret=ret.removesuffix(":"),
        indent=def_line[: len(def_line) - len(stripped)] + "    ",
        tags=tags.get(name, ()),
    )


def numeric_fields(entity: Entity) -> list[Field]:
    return [f for f in entity.fields if f.type in ("int", "float") and not f.name.endswith("_id")]


def fields_of_type(entity: Entity, *types: str) -> list[Field]:
    return [f for f in entity.fields if f.type in types]


def parse_expr(f: Field) -> str:
    key = f'payload["{f.name}"]'
    if f.type == "datetime":
        return f"parse_timestamp({key})"
    if f.type == "date":
        return f"date.fromisoformat({key})"
    if f.type in ("int", "float"):
        return f"{f.type}({key})"
    if f.type == "bool":
        return f"bool({key})"
    return key
