"""The fictional repository a session works on: names, file list and live file state.

Files are generated lazily, each from its own seeded ``random.Random`` derived
from the session seed and the path, so a file's first content does not
depend on the order in which the session happens to open files. Edits made
during the session change the stored text, and later reads show them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmark.transcript.synthetic.deps import Pin
from benchmark.transcript.synthetic.vocab import (
    DEVELOPERS,
    PYTHON_VERSIONS,
    THEMES,
    Entity,
    Theme,
)


@dataclass
class Func:
    """A function or method in a generated file; ``head`` is its def line plus docstring."""

    name: str
    qual: str  # "Class.method" for methods, as Python names them in errors
    def_line: str
    doc_line: str
    params: list[tuple[str, str]]
    ret: str
    indent: str  # indentation of the body
    tags: tuple[str, ...] = ()

    @property
    def head(self) -> str:
        return f"{self.def_line}\n{self.doc_line}"


@dataclass
class SourceFile:
    path: str
    text: str
    funcs: list[Func] = field(default_factory=list)
    consts: dict[str, str] = field(default_factory=dict)  # name -> value literal
    tests: list[str] = field(default_factory=list)  # test function names (test files)
    entity: Entity | None = None
    payload_keys: list[str] = field(default_factory=list)  # keys read as payload["..."]
    anchors: dict[str, str] = field(default_factory=dict)  # named exact snippets edits target

    @property
    def lines(self) -> int:
        return self.text.count("\n") + 1

    def line_of(self, needle: str) -> int:
        """1-based line number of the first line containing ``needle`` (1 if absent)."""
        index = self.text.find(needle)
        return self.text.count("\n", 0, index) + 1 if index >= 0 else 1

    def replace(self, old: str, new: str) -> None:
        if self.text.count(old) != 1:
            raise ValueError(f"edit of {self.path}: old text must occur exactly once")
        self.text = self.text.replace(old, new, 1)


@dataclass
class Project:
    seed: int
    theme: Theme
    pkg: str
    entities: tuple[Entity, ...]
    python: str
    developer: str
    workers: int
    build: FileBuilder  # writes a file's first content; injected so this module stays at the bottom
    files: dict[str, SourceFile] = field(default_factory=dict)
    planned: list[str] = field(default_factory=list)  # every path that exists at the start
    pins: list[Pin] = field(default_factory=list)  # breaking upgrades the session will meet
    taken_errors: set[str] = field(default_factory=set)  # error lines already shown (kept unique)

    @property
    def root(self) -> str:
        return f"/workspace/{self.pkg}"

    @property
    def vendor_host(self) -> str:
        return f"api.{self.theme.vendor.lower()}.example"

    @property
    def main(self) -> Entity:
        return self.entities[0]

    def src(self, module: str) -> str:
        return f"src/{self.pkg}/{module}.py"

    def service_path(self, entity: Entity) -> str:
        return self.src(f"services/{entity.name}_service")

    def repository_path(self, entity: Entity) -> str:
        return self.src(f"repositories/{entity.name}_repository")

    def test_path(self, module_path: str) -> str:
        stem = module_path.rsplit("/", 1)[-1].removesuffix(".py")
        return f"tests/test_{stem}.py"

    def file(self, path: str) -> SourceFile:
        """The file at ``path``, generated on first use."""
        if path not in self.files:
            rng = random.Random(f"{self.seed}:{path}")
            self.files[path] = self.build(self, path, rng)
        return self.files[path]

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.planned

    def add(self, source: SourceFile) -> None:
        self.files[source.path] = source
        if source.path not in self.planned:
            self.planned.append(source.path)

    def test_paths(self) -> list[str]:
        return [p for p in self.planned if p.startswith("tests/test_")]


CORE_MODULES = (
    "config",
    "db",
    "db_utils",
    "models",
    "schemas",
    "client",
    "exceptions",
    "utils",
    "cli",
    "api",
    "reports",
    "notifications",
    "tasks",
)
UNTESTED = frozenset({"models", "schemas", "exceptions"})  # covered through their users
TESTED = tuple(m for m in CORE_MODULES if m not in UNTESTED)
EXTRA_FILES = (
    "README.md",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "Makefile",
    "CHANGELOG.md",
    ".github/workflows/ci.yml",
    "config/settings.yaml",
)


FileBuilder = Callable[[Project, str, random.Random], SourceFile]


def make_project(seed: int, build: FileBuilder) -> Project:
    """The project for ``seed``; ``build`` generates each planned file when first opened."""
    rng = random.Random(seed)
    theme = THEMES[rng.randrange(len(THEMES))]
    pkg = theme.packages[rng.randrange(len(theme.packages))]
    entities = list(theme.entities)
    head = entities.pop(rng.randrange(len(entities)))
    rng.shuffle(entities)
    project = Project(
        seed=seed,
        theme=theme,
        pkg=pkg,
        entities=(head, *entities),
        python=PYTHON_VERSIONS[rng.randrange(len(PYTHON_VERSIONS))],
        developer=DEVELOPERS[rng.randrange(len(DEVELOPERS))],
        workers=rng.choice((2, 4, 6, 8)),
        build=build,
    )
    paths = list(EXTRA_FILES)
    paths.append(f"src/{pkg}/__init__.py")
    paths += [project.src(m) for m in CORE_MODULES]
    paths.append(f"src/{pkg}/services/__init__.py")
    paths += [project.service_path(e) for e in project.entities]
    paths.append(f"src/{pkg}/repositories/__init__.py")
    paths += [project.repository_path(e) for e in project.entities[:3]]
    paths.append("tests/conftest.py")
    paths += [project.test_path(project.src(m)) for m in TESTED]
    paths += [project.test_path(project.service_path(e)) for e in project.entities]
    paths.append("tests/test_repositories.py")
    project.planned = paths
    return project
