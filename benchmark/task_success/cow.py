"""Copy-on-write tau2 databases: a resume's environment without copying the whole database.

A resume needs its own environment (its tool calls change the database), but a
deep copy of retail's database costs ~55 ms of CPU and airline's ~260 ms, and hashing
one for the reward ~30-70 ms: with tens of resumes in flight that CPU, on threads that
hold the GIL, starved the LLM loop (0.06 of the ideal resumes per second on retail).
Here every environment of a domain shares one frozen *snapshot* of its tables, and
a :class:`CowTable` copies a record only when a write tool (or anything outside a
read tool) first touches it. ``tau2``'s read tools (``ToolType.READ``) get the shared
records without a copy; they only read (``tests/test_tau2_shared_env.py`` checks the
shared tables are unchanged after gold trajectories). :func:`same_db` then compares two
such databases as tau2's hash compares them, looking only at the records either touched,
and :class:`Snapshots` keeps replayed states frozen so a point replays once.

Only databases made of ``dict`` tables (mock, retail, airline) and environments without
a user database take this path; :func:`cow_capable` says so, and others are copied whole.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import typing
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

_MISSING = object()
_READ = "read"  # tau2's ToolType.READ value (a str enum)
Tables = dict[str, dict[str, Any]]


class Mode:
    """Whether the environment is inside a read tool (records handed out uncopied)."""

    __slots__ = ("read",)

    def __init__(self) -> None:
        self.read = False


class CowTable(dict):  # type: ignore[type-arg]
    """A table of records over a frozen ``base``: a record is deep-copied into this table
    the first time it is handed out (outside a read tool), so ``base`` is never changed.

    Every Python-level way to reach a value goes through :meth:`__getitem__`; defining
    ``__iter__`` makes ``dict(t)``, ``{**t}`` and ``d.update(t)`` take that way too.
    C-level readers (pydantic's and json's serializers) see the stored values as they are.
    """

    __slots__ = ("_base", "_mode")

    def __init__(self, base: dict[str, Any], mode: Mode) -> None:
        dict.__init__(self, base)
        self._base = base
        self._mode = mode

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if self._mode.read or value is not self._base.get(key, _MISSING):
            return value
        owned = copy.deepcopy(value)
        dict.__setitem__(self, key, owned)
        return owned

    def __iter__(self) -> typing.Iterator[Any]:
        return dict.__iter__(self)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[k] for k in list(dict.keys(self))]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(k, self[k]) for k in list(dict.keys(self))]

    def pop(self, key: Any, *default: Any) -> Any:
        if not dict.__contains__(self, key):
            return dict.pop(self, key, *default)
        value = self[key]
        dict.__delitem__(self, key)
        return value

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self[key]
        dict.__setitem__(self, key, default)
        return default

    def copy(self) -> dict[str, Any]:  # type: ignore[override]
        return dict(self.items())

    def __or__(self, other: Any) -> dict[str, Any]:  # type: ignore[override]
        merged = self.copy()
        merged.update(other)
        return merged

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in dict.items(self)}

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(dict.items(self)),)


def cow_capable(env: Any) -> bool:
    """An environment this module can share: an agent database of ``dict`` tables only,
    and no user database (telecom's device state is copied whole)."""
    db = getattr(env.tools, "db", None) if env.tools is not None else None
    if db is None or env.user_tools is not None:
        return False
    return all(isinstance(getattr(db, name), dict) for name in type(db).model_fields)


def snapshot(db: BaseModel) -> tuple[BaseModel, Tables]:
    """``db``'s tables frozen as they are now: the base of every view made from them.
    ``db`` itself must not be used for tool calls afterwards."""
    tables = {name: dict(dict.items(getattr(db, name))) for name in type(db).model_fields}
    return db, tables


class Snapshots:
    """Replayed states, frozen, by what made them (most recent ``size`` kept).

    Every point of a session is resumed more than once (the compacted history and the
    control, and once per policy in a sweep), each from the same replay: the first
    replay is frozen here and the others start from a view of it.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._kept: OrderedDict[str, tuple[BaseModel, Tables]] = OrderedDict()
        self._making: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[BaseModel, Tables] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: str, frozen: tuple[BaseModel, Tables]) -> None:
        with self._lock:
            self._kept[key] = frozen
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

    def get_or_make(
        self, key: str, make: Callable[[], tuple[BaseModel, Tables]]
    ) -> tuple[BaseModel, Tables]:
        """The state kept under ``key``, or ``make()``'s, kept. A point's compacted resume
        and its control start together: the second waits for the first's replay."""
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        try:
            with making:
                found = self.get(key)
                if found is None:
                    found = make()  # a replay that does not check out raises: nothing kept
                    self.put(key, found)
        finally:
            with self._lock:
                self._making.pop(key, None)
        return found

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def replay_key(base: str, history: list[Any]) -> str:
    """What a replay of tau2 ``history`` onto the state ``base`` depends on and checks:
    each message's role and tool calls (id, name, arguments, requestor) and each tool
    result (id, requestor, text). What was said is left out: tau2's ``set_state`` reads
    only whether a message calls tools, so two histories that differ only in words
    replay to the same state, with the same checks."""
    parts: list[Any] = []
    for m in history:
        if m.role == "tool":
            parts.append(["tool", m.id, m.requestor, m.content])
        else:
            calls = getattr(m, "tool_calls", None) or []
            parts.append([m.role, [[c.id, c.name, c.arguments, c.requestor] for c in calls]])
    text = json.dumps([base, parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def view(frozen: tuple[BaseModel, Tables], mode: Mode) -> BaseModel:
    """A database over ``frozen``'s tables that copies a record on first use (O(tables))."""
    template, tables = frozen
    db = template.model_copy()
    for name, table in tables.items():
        db.__dict__[name] = CowTable(table, mode)
    return db


def read_tools_share(toolkit: Any, mode: Mode) -> None:
    """Hand a read tool the shared records uncopied: ``use_tool`` sets ``mode`` around it."""
    plain = toolkit.use_tool
    kinds = _tool_kinds(toolkit)

    def use_tool(tool_name: str, **kwargs: Any) -> Any:
        mode.read = kinds.get(tool_name) == _READ
        try:
            return plain(tool_name, **kwargs)
        finally:
            mode.read = False

    toolkit.use_tool = use_tool


_KINDS: dict[type, dict[str, str]] = {}


def _tool_kinds(toolkit: Any) -> dict[str, str]:
    """Each tool's ``ToolType`` value, once per toolkit class (``toolkit.tools`` is rebuilt
    on every access)."""
    kinds = _KINDS.get(type(toolkit))
    if kinds is None:
        tools = toolkit.tools
        kinds = {name: str(getattr(toolkit.tool_type(name), "value", "")) for name in tools}
        _KINDS[type(toolkit)] = kinds
    return kinds


def is_view(env: Any) -> bool:
    """An environment whose database is a copy-on-write view (made by :func:`view`)."""
    db = getattr(env.tools, "db", None) if env.tools is not None else None
    return db is not None and any(isinstance(v, CowTable) for v in db.__dict__.values())


@cache
def _adapter(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    """How ``model`` serializes one value of the table ``field`` (its declared type)."""
    annotation = model.model_fields[field].annotation
    args = typing.get_args(annotation)
    return TypeAdapter(args[1] if len(args) == 2 else Any)


def _text(value: Any) -> str:
    """What tau2's hash reads of a value: JSON with sorted keys, ``default=str``."""
    return json.dumps(value, sort_keys=True, default=str)


def same_db(a: BaseModel, b: BaseModel) -> bool:
    """Whether tau2's ``get_dict_hash(db.model_dump())`` of ``a`` and ``b`` agree, looking
    only at the records that are not the same object in both (the ones either touched).

    The hash is of JSON with sorted keys, so two tables agree when their key sets do and
    every record serializes alike; a record shared by both is alike without a look.
    """
    if type(a) is not type(b):
        return _text(a.model_dump()) == _text(b.model_dump())
    model = type(a)
    for name in model.model_fields:
        x, y = a.__dict__[name], b.__dict__[name]
        if not (isinstance(x, dict) and isinstance(y, dict)):
            if _text(a.model_dump(include={name})) != _text(b.model_dump(include={name})):
                return False
            continue
        if dict.keys(x) != dict.keys(y):
            return False
        dump = _adapter(model, name).dump_python
        for key, mine in dict.items(x):
            theirs = dict.__getitem__(y, key)
            if mine is not theirs and _text(dump(mine)) != _text(dump(theirs)):
                return False
    return True
