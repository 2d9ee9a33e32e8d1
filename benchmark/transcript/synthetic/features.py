"""Registry of feature requests a session can plant (see feature_model for the shape).

Each feature's code is data (data/feature_code.yaml and its feature_<key>.py.tmpl); here
are its random draws, in their fixed order, and how its wiring edit finds its anchor."""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmark.transcript.synthetic.feature_model import Feature, finish, snippet
from benchmark.transcript.synthetic.project import Project
from benchmark.transcript.synthetic.scenarios import append_edit


def cache(project: Project, rng: random.Random) -> Feature:
    e = project.main
    ttl = rng.choice((60, 120, 300, 600))
    client = project.file(project.src("client"))
    head = next(f for f in client.funcs if f.name == f"fetch_{e.name}").head
    old, new = (snippet(project, "cache", part, head=head) for part in ("old", "new"))
    return finish(project, "cache", {"ttl": ttl}, (project.src("client"), old, new), ttl=ttl)


def retry(project: Project, rng: random.Random) -> Feature:
    base = rng.choice(("0.5", "1.0"))
    client = project.file(project.src("client"))
    def_line = next(f for f in client.funcs if f.name == "_request").def_line
    wiring = (project.src("client"), def_line, snippet(project, "retry", "new", def_line=def_line))
    values = {"base": base, "doubled": float(base) * 2}
    return finish(project, "retry", values, wiring, base=base)


def export(project: Project, rng: random.Random) -> Feature:
    columns = tuple(["id"] + [f.name for f in project.main.fields[:4]])
    values = {"largest": rng.choice((80, 150, 400))}
    old, new = (snippet(project, "export", part) for part in ("old", "new"))
    return finish(project, "export", values, (project.src("cli"), old, new), columns=columns)


def ratelimit(project: Project, rng: random.Random) -> Feature:
    rate = rng.choice((5, 10, 20))
    old, new = (snippet(project, "ratelimit", part) for part in ("old", "new"))
    values = {"rate": rate, "burst": float(rate * 4)}
    return finish(
        project, "ratelimit", values, (project.src("api"), old, new), rate=rate, capacity=rate * 2
    )


def audit(project: Project, rng: random.Random) -> Feature:
    e = project.main
    f1, f2 = e.fields[0].name, e.fields[1].name
    svc = project.file(project.service_path(e))
    anchor = snippet(project, "audit", "old")
    if svc.text.count(anchor) != 1:
        anchor = next(f for f in svc.funcs if f.name == f"create_{e.name}").head
    wiring = (project.service_path(e), anchor, snippet(project, "audit", "new", anchor=anchor))
    values = {"f2": f2, "both": repr(sorted((f1, f2)))}
    return finish(project, "audit", values, wiring, f1=f1, f2=f2)


def pagination(project: Project, rng: random.Random) -> Feature:
    api = project.file(project.src("api"))
    old, new = append_edit(api, snippet(project, "pagination", "route"))
    return finish(project, "pagination", {}, (project.src("api"), old, new))


def health(project: Project, rng: random.Random) -> Feature:
    slow_ms = rng.choice((100, 250, 500))
    api = project.file(project.src("api"))
    old, new = append_edit(api, snippet(project, "health", "route"))
    return finish(project, "health", {}, (project.src("api"), old, new), slow_query_ms=slow_ms)


FEATURES: dict[str, Callable[[Project, random.Random], Feature]] = {
    "cache": cache,
    "retry": retry,
    "export": export,
    "ratelimit": ratelimit,
    "audit": audit,
    "pagination": pagination,
    "health": health,
}
