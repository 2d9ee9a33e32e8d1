"""Non-Python files of the fictional project: README, packaging, CI and config."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
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
    return resources.render(
        "docs_readme.md.tmpl",
        project=project,
        t=t,
        entities=entities,
        pkg_upper=project.pkg.upper(),
        cmds=cmds,
    )


def pyproject(project: Project, rng: random.Random) -> str:
    major = project.python.rsplit(".", 1)[0]
    return resources.render(
        "docs_pyproject.toml.tmpl",
        project=project,
        summary=project.theme.summary.capitalize(),
        major=major,
        line_length=rng.choice((88, 100, 110)),
        major_compact=major.replace(".", ""),
    )


def makefile(project: Project, rng: random.Random) -> str:
    return resources.render(
        "docs_makefile.tmpl", project=project, port=rng.choice((8000, 8080, 8765))
    )


def changelog(project: Project, rng: random.Random) -> str:
    major = project.seed % 7 + 3
    return resources.render(
        "docs_changelog.md.tmpl", project=project, major=major, previous_major=major - 1
    )


def ci(project: Project, rng: random.Random) -> str:
    return resources.render(
        "docs_ci.yml.tmpl",
        python_minor=project.python.rsplit(".", 1)[0],
        project=project,
        coverage=rng.choice((75, 80, 85)),
    )


def settings_yaml(project: Project, rng: random.Random) -> str:
    return resources.render(
        "docs_settings.yaml.tmpl",
        project=project,
        timeout=rng.choice((5, 10, 15)),
        page_size=rng.choice((20, 50, 100)),
    )


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
