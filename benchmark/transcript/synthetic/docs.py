"""Non-Python files of the fictional project: README, packaging, CI and config."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.project import Project, SourceFile

BASE_REQUIREMENTS = (
    ("sqlalchemy", ">=2.0"),
    ("httpx", ">=0.25"),
    ("pydantic", ">=2.5"),
    ("fastapi", ">=0.110"),
    ("uvicorn", ">=0.29"),
    ("click", ">=8.1"),
    ("python-dateutil", ">=2.8"),
)
OPTIONAL_REQUIREMENTS = (
    ("jinja2", ">=3.0"),
    ("pyyaml", ">=5.4"),
    ("numpy", ">=1.24"),
    ("urllib3", ">=1.26"),
    ("requests", ">=2.28"),
    ("pillow", ">=9.0"),
    ("markupsafe", ">=2.0"),
)


def build_text(project: Project, path: str, rng: random.Random) -> SourceFile:
    return SourceFile(path=path, text=BUILDERS[path](project, rng))


def requirements(project: Project, rng: random.Random) -> str:
    extra = list(rng.sample(OPTIONAL_REQUIREMENTS, 4))
    names = {name for name, _ in (*BASE_REQUIREMENTS, *extra)}
    for pin in project.pins:
        if pin.package not in names:
            extra.append((pin.package, f">={pin.good.rsplit('.', 1)[0]}"))
            names.add(pin.package)
    lines = [f"{name}{spec}" for name, spec in sorted((*BASE_REQUIREMENTS, *extra))]
    return "# Runtime dependencies; pins carry a comment saying why.\n" + "\n".join(lines) + "\n"


def requirements_dev(project: Project, rng: random.Random) -> str:
    return (
        "-r requirements.txt\npytest>=8.0\npytest-cov>=5.0\nruff>=0.5\nmypy>=1.10\n"
        "types-python-dateutil\nrespx>=0.21\n"
    )


def readme(project: Project, rng: random.Random) -> str:
    t = project.theme
    cmds = "\n".join(
        f"python -m {project.pkg}.cli {c} --since 2024-05-01   # the nightly {c} job"
        for c in t.commands
    )
    entities = ", ".join(e.plural for e in project.entities)
    return f"""# {project.pkg}

{project.pkg} is {t.summary}. It keeps {entities} in a SQL database, pulls
changes from the {t.vendor} API every night and serves them over a small HTTP API.

## Development

```bash
python -m venv .venv && . .venv/bin/activate
pip install -r requirements-dev.txt
pip install -e .
pytest -q
```

Configuration comes from `{project.pkg.upper()}_*` environment variables (see
`src/{project.pkg}/config.py`); `config/settings.yaml` holds the defaults for local runs.

## Commands

```bash
{cmds}
```

## Layout

- `src/{project.pkg}/services/`: business rules, one module per entity
- `src/{project.pkg}/repositories/`: persistence, the only code that writes rows
- `src/{project.pkg}/client.py`: the {t.vendor} HTTP client
- `tests/`: pytest suite; `tests/conftest.py` has the shared fixtures

Maintainer: {project.developer} (ask before changing the {t.vendor} sync schedule).
"""


def pyproject(project: Project, rng: random.Random) -> str:
    major = project.python.rsplit(".", 1)[0]
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{project.pkg}"
dynamic = ["version", "dependencies"]
description = "{project.theme.summary.capitalize()}"
requires-python = ">={major}"

[tool.setuptools.dynamic]
version = {{attr = "{project.pkg}.__version__"}}
dependencies = {{file = ["requirements.txt"]}}

[project.scripts]
{project.pkg} = "{project.pkg}.cli:cli"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
filterwarnings = ["error::DeprecationWarning:{project.pkg}.*"]

[tool.ruff]
line-length = {rng.choice((88, 100, 110))}
target-version = "py{major.replace(".", "")}"

[tool.ruff.lint]
select = ["E", "F", "I", "B", "UP"]

[tool.mypy]
strict_optional = true
warn_unused_ignores = true
packages = ["{project.pkg}"]
"""


def makefile(project: Project, rng: random.Random) -> str:
    return f""".PHONY: test lint typecheck run

test:
\tpytest -q

lint:
\truff check src tests

typecheck:
\tmypy src/{project.pkg}

run:
\tuvicorn {project.pkg}.api:app --reload --port {rng.choice((8000, 8080, 8765))}
"""


def changelog(project: Project, rng: random.Random) -> str:
    major = project.seed % 7 + 3
    return f"""# Changelog

## Unreleased

- Nightly {project.theme.commands[0]} logs a summary line per run.

## 0.{major}.0

- {project.theme.vendor} v2 API support; v1 endpoints removed.
- `{project.theme.commands[1]}` command gained `--dry-run`.

## 0.{major - 1}.2

- Fixed double counting of {project.main.plural} in the weekly report.
"""


def ci(project: Project, rng: random.Random) -> str:
    return f"""name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "{project.python.rsplit(".", 1)[0]}"
      - run: pip install -r requirements-dev.txt && pip install -e .
      - run: ruff check src tests
      - run: mypy src/{project.pkg}
      - run: pytest -q --cov={project.pkg} --cov-fail-under={rng.choice((75, 80, 85))}
"""


def settings_yaml(project: Project, rng: random.Random) -> str:
    return f"""# Local defaults; production overrides come from the environment.
database_url: sqlite:///./{project.pkg}.db
api_base_url: https://{project.vendor_host}/v2
request_timeout_seconds: {rng.choice((5, 10, 15))}
page_size: {rng.choice((20, 50, 100))}
log_level: DEBUG
schedule:
  {project.theme.commands[0]}: "0 2 * * *"
  {project.theme.commands[2]}: "30 6 * * 1"
"""


BUILDERS = {
    "README.md": readme,
    "pyproject.toml": pyproject,
    "requirements.txt": requirements,
    "requirements-dev.txt": requirements_dev,
    "Makefile": makefile,
    "CHANGELOG.md": changelog,
    ".github/workflows/ci.yml": ci,
    "config/settings.yaml": settings_yaml,
}
