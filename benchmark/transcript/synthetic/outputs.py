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
SAY = resources.Wording("outputs.yaml")


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
        lines += [bar(SAY("session_bar")), _head(project), SAY("pytest_plugins")]
    per_file: list[tuple[str, list[str]]] = []
    for path in paths:
        tests = project.file(path).tests or ["test_smoke"]
        ids = [f"{path}::{t}" for t in tests]
        if only:
            ids = [i for i in ids if i == only or i.startswith(only + "[")] or [only]
        per_file.append((path, ids))
    total = sum(len(ids) for _, ids in per_file)
    if not quiet:
        lines.append(SAY("collected", total=total, s=_s(total)))
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
        lines += ["", bar(SAY("failures_bar"))]
        for failure in failures:
            name = failure.test_id.split("::", 1)[1]
            lines.append(bar(name, "_"))
            lines += [""] + failure.section + [""]
    lines.append(bar(SAY("summary_bar")))
    lines += [f.line for f in failures]
    seconds = f"{rng.uniform(0.4, 2.5) + total * 0.02:.2f}s"
    passed = total - len(failures)
    parts = ([SAY("failed_count", count=len(failures))] if failures else []) + (
        [SAY("passed_count", count=passed)] if passed else []
    )
    tally = SAY("tally", parts=", ".join(parts), seconds=seconds)
    if not failures:
        lines.pop()
    lines.append(tally if quiet else bar(tally))
    return with_exit("\n".join(lines), 1 if failures else 0), 1 if failures else 0


def collection_error(
    project: Project, rng: random.Random, test_path: str, error: str, import_line: str
) -> str:
    text = SAY(
        "collection_error",
        session_bar=bar(SAY("session_bar")),
        head=_head(project),
        errors_bar=bar(SAY("errors_bar")),
        collecting_bar=bar(SAY("collecting_bar", test_path=test_path), "_"),
        root=project.root,
        test_path=test_path,
        lib=_lib(project),
        import_line=import_line,
        error=error,
        summary_bar=bar(SAY("summary_bar")),
        interrupted_bar=bar(SAY("interrupted_bar"), "!"),
        tally_bar=bar(SAY("collection_tally", seconds=rng.uniform(0.3, 0.9))),
    )
    return with_exit(text, 2)


def _head(project: Project) -> str:
    return SAY("pytest_head", python=project.python, root=project.root)


def _lib(project: Project) -> str:
    return SAY("lib", version=project.python.rsplit(".", 1)[0])


def _s(count: int) -> str:
    return "s" if count != 1 else ""


def traceback(frames: list[Frame], final: str) -> str:
    """``frames`` are (file, line, function, source line) from outermost to innermost."""
    lines = [SAY("traceback_head")]
    for path, line, func, code in frames:
        lines.append(SAY("traceback_frame", path=path, line=line, func=func))
        if code:
            lines.append(f"    {code}")
    lines.append(final)
    return "\n".join(lines)


Frame = tuple[str, int, str, str]  # (file, line, function, source line)

# Frames of code that is not the project's, outermost first, by the call they serve.
LIBRARY_FRAMES: dict[str, list[list]] = resources.yaml_data("bug_tables.yaml")["library_frames"]


def library_frames(project: Project, group: str) -> list[Frame]:
    """The frames of ``group`` in :data:`LIBRARY_FRAMES`, for this project's interpreter."""
    lib = _lib(project)
    site = site_packages(project)
    return [
        (path.format(site=site, lib=lib), line, func, code)
        for path, line, func, code in LIBRARY_FRAMES[group]
    ]


def site_packages(project: Project) -> str:
    return SAY("site_packages", root=project.root, version=project.python.rsplit(".", 1)[0])


def short_sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(28):07x}"


def git_log(entries: list[tuple[str, str]]) -> str:
    return with_exit("\n".join(f"{sha} {msg}" for sha, msg in reversed(entries[-8:])), 0)


def git_commit(branch: str, sha: str, message: str, files: int, adds: int, dels: int) -> str:
    head = SAY("commit_head", branch=branch, sha=sha, message=message)
    stat = SAY("commit_stat", files=files, s=_s(files), adds=adds, dels=dels)
    return with_exit(f"{head}\n{stat}", 0)


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
    v = {"package": package, "version": version, "previous": previous, "site": site}
    wheel, size = package.replace("-", "_"), len(package) * 13 + 40
    lines = [
        SAY("collecting_pinned" if previous else "collecting", **v),
        SAY("downloading", wheel=wheel, size=size, **v),
    ]
    for dep, dep_version in deps:
        lines.append(SAY("already_satisfied", dep=dep, dep_version=dep_version, **v))
    lines.append(SAY("installing", **v))
    if previous:
        lines.append(SAY("uninstalling", **v))
    lines.append(SAY("installed", **v))
    return with_exit("\n".join(lines), 0)


def pip_show(
    package: str, version: str, site: str, requires: list[str], required_by: list[str]
) -> str:
    text = SAY(
        "pip_show",
        package=package,
        version=version,
        site=site,
        requires=", ".join(requires),
        required_by=", ".join(required_by),
    )
    return with_exit(text, 0)


def ruff_output(lines: list[str], count: int, fixable: int) -> str:
    if not count:
        return with_exit(SAY("ruff_clean"), 0)
    tail = [SAY("ruff_found", count=count, s=_s(count))]
    if fixable:
        tail.append(SAY("ruff_fixable", fixable=fixable))
    return with_exit("\n".join(lines + tail), 1)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{_s(n)}"


def mypy_output(errors: list[str], checked: int) -> str:
    sources = _plural(checked, "source file")
    if not errors:
        return with_exit(SAY("mypy_clean", sources=sources), 0)
    files = _plural(len({e.split(":", 1)[0] for e in errors}), "file")
    summary = SAY("mypy_found", errors=_plural(len(errors), "error"), files=files, sources=sources)
    return with_exit("\n".join([*errors, summary]), 1)


def count_lines(text: str) -> int:
    return len(re.findall("\n", text.rstrip("\n"))) + 1 if text else 0
