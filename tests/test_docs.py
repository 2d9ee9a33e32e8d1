"""The docs: the site builds strictly, the README stays short, links resolve, and every
generated page or figure equals what its command writes now (stale = fail, with the
command that refreshes it)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO, group_options

DOCS = REPO / "docs"
README = REPO / "README.md"
SCRIPTS = REPO / "scripts"
BENCHMARKS = REPO / "benchmarks"
# Scripts of benchmarks/ that are no benchmark (helpers, inspect_ai's task), and those
# whose figures could not be taken where the snippets were written (inspect_ai absent).
NOT_MEASURING = {"docs_snippet", "peer_task"}
NOT_RUN_HERE = {"peer_inspect"}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _script(name: str) -> ModuleType:
    """A script of scripts/ imported as a module (they import their siblings by name)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert (tmp_path / "reference" / "index.html").is_file()
    assert (tmp_path / "logs" / "claude_code" / "index.html").is_file()


def test_readme_is_short_and_links_into_the_docs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    linked = {m[0] or m[1] for m in LINK.findall(text)}
    for page in ("getting-started", "logs/index", "policies", "probes", "answerer-and-judge"):
        assert f"docs/{page}.md" in linked, page
    for page in ("statistics", "mlflow-and-report", "llm-endpoints", "speed", "reference"):
        assert f"docs/{page}.md" in linked, page
    for package in ("config/", "run/", "scoring/", "text/"):
        assert f"`{package}`" in text, package  # How one job runs names the packages


def test_every_relative_link_resolves():
    """README and docs links, images included, point at files that exist (anchors are
    checked by the strict build, which reads the docs' headings)."""
    broken = []
    for page in _pages():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for match in LINK.finditer(text):
            target = (match[1] or match[2]).split("#", 1)[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken


def test_reference_help_and_readme_commands_are_current():
    reference = _script("docs_reference")
    stale = [
        str(path.relative_to(REPO))
        for path, text in reference.outputs().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale: {stale}; run: python scripts/docs_reference.py"


def test_reference_names_every_group_option_and_key():
    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    for group in ("policy", "judge", "answerer", "summarizer", "transcript", "probe", "endpoint"):
        for option in group_options(group):
            assert f"| `{option}` |" in text, (group, option)
    for key in ("compaction.context_window", "transcript.path", "tracking.uri", "audit.samples"):
        assert f"| `{key}` |" in text, key
    assert "| `max_concurrency` |" in text  # endpoint fields
    assert "| `recent_tokens` |" in text  # a part's options, from its target's settings


def test_help_lists_every_group_and_option(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmark", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    out = done.stdout
    for group in sorted(p.name for p in (REPO / "conf").iterdir() if p.is_dir()):
        if group == "hydra":
            continue
        assert f"\n{group}: " in out, group
        for option in group_options(group):
            assert re.search(rf"^\s+\*?{re.escape(option)}\s", out, re.M), (group, option)
    assert "python -m benchmark.report" in out and "--cfg job" in out
    assert "$APP_CONFIG_GROUPS" not in out and "$$" not in out  # the template was filled


def test_hydra_help_and_cfg_job_still_work(tmp_path):
    hydra_help = subprocess.run(
        [sys.executable, "-m", "benchmark", "--hydra-help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert hydra_help.returncode == 0 and "== Flags ==" in hydra_help.stdout
    assert "Traceback" not in hydra_help.stderr
    cfg = subprocess.run(
        [sys.executable, "-m", "benchmark", "--cfg", "job", "policy=truncate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cfg.returncode == 0 and "Traceback" not in cfg.stderr
    assert "name: truncate" in cfg.stdout and "hydra:" not in cfg.stdout


def test_default_job_figures_are_current(default_sessions):
    """The default job's snippet (counts and scorecard) equals a fresh run's."""
    figures = _script("docs_figures")
    fresh = figures.default_job(default_sessions[2])
    path = DOCS / "figures" / "default_job.md"
    assert path.read_text(encoding="utf-8") == fresh, "stale: run python scripts/docs_figures.py"
    assert '--8<-- "figures/default_job.md"' in (DOCS / "how-it-works.md").read_text()


def test_task_success_figures_are_current():
    """The offline task-success job's snippet (its scorecard: cost per resume) equals a
    fresh run's."""
    pytest.importorskip("tau2", reason="the tau2 extra is not installed")
    fresh = _script("docs_figures").task_success()
    path = DOCS / "figures" / "task_success.md"
    assert path.read_text(encoding="utf-8") == fresh, "stale: run python scripts/docs_figures.py"
    assert '--8<-- "figures/task_success.md"' in (DOCS / "task-success.md").read_text()


def test_benchmark_figures_exist_name_their_command_and_are_shown():
    """Each benchmark script's snippet (``--write-docs``) is there, says which command
    printed it, and a page includes it; no page types those figures itself."""
    included = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    scripts = sorted(p.stem for p in BENCHMARKS.glob("*.py"))
    measured = [s for s in scripts if s not in NOT_MEASURING | NOT_RUN_HERE]
    assert "stage_times" in measured and "ci_coverage" in measured
    for name in measured:
        assert "docs_snippet.run(main, __file__)" in (BENCHMARKS / f"{name}.py").read_text()
        snippet = DOCS / "figures" / "benchmarks" / f"{name}.md"
        assert snippet.is_file(), f"run: python benchmarks/{name}.py --write-docs"
        text = snippet.read_text(encoding="utf-8")
        assert f"`python benchmarks/{name}.py" in text, name
        assert f'--8<-- "figures/benchmarks/{name}.md"' in included, name


def test_sweep_comparison_figure_is_the_sweeps_own():
    """The five-policy sweep's printed comparison (``docs_figures.py --sweep``: a minute,
    so only its presence and its command are checked here) is what the MLflow page shows."""
    text = (DOCS / "figures" / "sweep_comparison.md").read_text(encoding="utf-8")
    assert "docs_figures.py --sweep" in text and "`python -m benchmark -m policy=" in text
    assert "Sweep comparison (95% intervals):" in text
    page = (DOCS / "mlflow-and-report.md").read_text(encoding="utf-8")
    assert '--8<-- "figures/sweep_comparison.md"' in page
    assert "| none | " not in page  # the table is the snippet's, not typed in the page
