"""Realistic tool output: pytest runs, tracebacks, git, grep, pip, ruff and mypy.

Output is derived from the live project files (test names, line numbers,
grep matches), so what the agent sees stays consistent with what it read.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.project import Project

WIDTH = 80


def bar(title: str, ch: str = "=") -> str:
    if not title:
        return ch * WIDTH
    title = f" {title} "
    left = (WIDTH - len(title)) // 2
    return ch * left + title + ch * max(WIDTH - left - len(title), 0)


def with_exit(text: str, code: int) -> str:
    return f"{text.rstrip()}\n\n[exit code: {code}]"


@dataclass
class TestFailure:
    test_id: str  # tests/test_x.py::test_name
    summary: str  # text after " - " in the short summary (e.g. "KeyError: 'x'")
    section: list[str] = field(default_factory=list)  # body of the FAILURES entry

    @property
    def line(self) -> str:
        return f"FAILED {self.test_id} - {self.summary}"


def pytest_run(
    project: Project,
    rng: random.Random,
    paths: list[str],
    failures: list[TestFailure],
    *,
    quiet: bool = False,
    only: str = "",
) -> tuple[str, int]:
    """Output of a pytest run over ``paths`` (or the single node id ``only``)."""
    failed = {f.test_id for f in failures}
    lines: list[str] = []
    if not quiet:
        lines += [
            bar("test session starts"),
            f"platform linux -- Python {project.python}, pytest-8.3.2, pluggy-1.5.0",
            f"rootdir: {project.root}",
            "configfile: pyproject.toml",
            "plugins: cov-5.0.0, respx-0.21.1, anyio-4.4.0",
        ]
    per_file: list[tuple[str, list[str]]] = []
    for path in paths:
        tests = project.file(path).tests or ["test_smoke"]
        ids = [f"{path}::{t}" for t in tests]
        if only:
            ids = [i for i in ids if i == only or i.startswith(only + "[")] or [only]
        per_file.append((path, ids))
    total = sum(len(ids) for _, ids in per_file)
    if not quiet:
        lines.append(f"collected {total} item{'s' if total != 1 else ''}")
        lines.append("")
    done = 0
    if quiet:  # one stream of marks, wrapped at the terminal width
        marks = "".join("F" if i in failed else "." for _, ids in per_file for i in ids)
        row = WIDTH - 7
        for start in range(0, len(marks), row):
            chunk = marks[start : start + row]
            done = start + len(chunk)
            pct = f"[{done * 100 // max(total, 1):>3}%]"
            lines.append(f"{chunk:<{WIDTH - len(pct)}}{pct}")
    for path, ids in per_file if not quiet else []:
        marks = "".join("F" if i in failed else "." for i in ids)
        done += len(ids)
        pct = f"[{done * 100 // max(total, 1):>3}%]"
        head = f"{path} {marks}"
        lines.append(f"{head:<{WIDTH - len(pct)}}{pct}")
    if failures:
        lines += ["", bar("FAILURES")]
        for failure in failures:
            name = failure.test_id.split("::", 1)[1]
            lines.append(bar(name, "_"))
            lines += [""] + failure.section + [""]
    lines.append(bar("short test summary info"))
    lines += [f.line for f in failures]
    seconds = f"{rng.uniform(0.4, 2.5) + total * 0.02:.2f}s"
    passed = total - len(failures)
    parts = ([f"{len(failures)} failed"] if failures else []) + (
        [f"{passed} passed"] if passed else []
    )
    tally = ", ".join(parts) + f" in {seconds}"
    if not failures:
        lines.pop()
    lines.append(tally if quiet else bar(tally))
    return with_exit("\n".join(lines), 1 if failures else 0), 1 if failures else 0


def collection_error(
    project: Project, rng: random.Random, test_path: str, error: str, import_line: str
) -> str:
    lines = [
        bar("test session starts"),
        f"platform linux -- Python {project.python}, pytest-8.3.2, pluggy-1.5.0",
        f"rootdir: {project.root}",
        "configfile: pyproject.toml",
        "collected 0 items / 1 error",
        "",
        bar("ERRORS"),
        bar(f"ERROR collecting {test_path}", "_"),
        f"ImportError while importing test module '{project.root}/{test_path}'.",
        "Hint: make sure your test modules/packages have valid Python names.",
        "Traceback:",
        f"/usr/lib/python{project.python.rsplit('.', 1)[0]}/importlib/__init__.py:126: in "
        "import_module",
        "    return _bootstrap._gcd_import(name[level:], package, level)",
        f"{test_path}:7: in <module>",
        f"    {import_line}",
        f"E   {error}",
        bar("short test summary info"),
        f"ERROR {test_path}",
        bar("Interrupted: 1 error during collection", "!"),
        bar(f"1 error in {rng.uniform(0.3, 0.9):.2f}s"),
    ]
    return with_exit("\n".join(lines), 2)


def traceback(frames: list[Frame], final: str) -> str:
    """``frames`` are (file, line, function, source line) from outermost to innermost."""
    lines = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        lines.append(f'  File "{path}", line {line}, in {func}')
        if code:
            lines.append(f"    {code}")
    lines.append(final)
    return "\n".join(lines)


Frame = tuple[str, int, str, str]  # (file, line, function, source line)

# Frames of code that is not the project's, outermost first, by the call they serve.
LIBRARY_FRAMES: dict[str, list[list]] = resources.yaml_data("bug_tables.yaml")["library_frames"]


def library_frames(project: Project, group: str) -> list[Frame]:
    """The frames of ``group`` in :data:`LIBRARY_FRAMES`, for this project's interpreter."""
    lib = f"/usr/lib/python{project.python.rsplit('.', 1)[0]}"
    site = site_packages(project)
    return [
        (path.format(site=site, lib=lib), line, func, code)
        for path, line, func, code in LIBRARY_FRAMES[group]
    ]


def site_packages(project: Project) -> str:
    return f"{project.root}/.venv/lib/python{project.python.rsplit('.', 1)[0]}/site-packages"


def short_sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(28):07x}"


def git_log(entries: list[tuple[str, str]]) -> str:
    return with_exit("\n".join(f"{sha} {msg}" for sha, msg in reversed(entries[-8:])), 0)


def git_commit(branch: str, sha: str, message: str, files: int, adds: int, dels: int) -> str:
    return with_exit(
        f"[{branch} {sha}] {message}\n {files} file{'s' if files != 1 else ''} changed, "
        f"{adds} insertions(+), {dels} deletions(-)",
        0,
    )


def grep_matches(project: Project, pattern: str, under: str, limit: int = 40) -> list[str]:
    """Real matches of ``pattern`` (a literal) over the project's text files under ``under``."""
    out: list[str] = []
    for path in project.planned:
        if not path.startswith(under.rstrip("/")) or path.endswith(".md"):
            continue
        for number, line in enumerate(project.file(path).text.splitlines(), 1):
            if pattern in line:
                out.append(f"{path}:{number}:{line}")
                if len(out) >= limit:
                    return out
    return out


def ls_tree(project: Project, under: str) -> str:
    entries: dict[str, None] = {}
    prefix = under.rstrip("/") + "/" if under not in ("", ".") else ""
    for path in project.planned:
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :]
        head = rest.split("/", 1)[0] + ("/" if "/" in rest else "")
        entries.setdefault(head, None)
    return with_exit("\n".join(sorted(entries)), 0)


def pip_install(
    package: str, version: str, previous: str, deps: list[tuple[str, str]], site: str
) -> str:
    lines = [
        f"Collecting {package}=={version}" if previous else f"Collecting {package}",
        f"  Downloading {package.replace('-', '_')}-{version}.tar.gz ({len(package) * 13 + 40} kB)",
    ]
    for dep, dep_version in deps:
        lines.append(
            f"Requirement already satisfied: {dep} in {site} (from {package}) ({dep_version})"
        )
    lines.append(f"Installing collected packages: {package}")
    if previous:
        lines += [
            f"  Attempting uninstall: {package}",
            f"    Found existing installation: {package} {previous}",
            f"    Uninstalling {package}-{previous}:",
            f"      Successfully uninstalled {package}-{previous}",
        ]
    lines.append(f"Successfully installed {package}-{version}")
    return with_exit("\n".join(lines), 0)


def pip_show(
    package: str, version: str, site: str, requires: list[str], required_by: list[str]
) -> str:
    return with_exit(
        "\n".join(
            [
                f"Name: {package}",
                f"Version: {version}",
                f"Summary: {package} for Python",
                f"Location: {site}",
                f"Requires: {', '.join(requires)}",
                f"Required-by: {', '.join(required_by)}",
            ]
        ),
        0,
    )


def ruff_output(lines: list[str], count: int, fixable: int) -> str:
    if not count:
        return with_exit("All checks passed!", 0)
    tail = [f"Found {count} error{'s' if count != 1 else ''}."]
    if fixable:
        tail.append(f"[*] {fixable} fixable with the `--fix` option.")
    return with_exit("\n".join(lines + tail), 1)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def mypy_output(errors: list[str], checked: int) -> str:
    sources = _plural(checked, "source file")
    if not errors:
        return with_exit(f"Success: no issues found in {sources}", 0)
    files = _plural(len({e.split(":", 1)[0] for e in errors}), "file")
    summary = f"Found {_plural(len(errors), 'error')} in {files} (checked {sources})"
    return with_exit("\n".join([*errors, summary]), 1)


def count_lines(text: str) -> int:
    return len(re.findall("\n", text.rstrip("\n"))) + 1 if text else 0
