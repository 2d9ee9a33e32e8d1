"""Feature requests around the HTTP API: per-client rate limits and an audit trail."""

from __future__ import annotations

import random

import benchmark.transcript.synthetic.resources as resources
from benchmark.transcript.synthetic.feature_model import Feature, finish, test_module
from benchmark.transcript.synthetic.project import Project, SourceFile


def ratelimit(project: Project, rng: random.Random) -> Feature:
    pkg = project.pkg
    rate = rng.choice((5, 10, 20))
    path = project.src("rate_limit")
    bug_line = "        self._tokens = self._tokens + elapsed * self.rate"
    module = resources.render(
        "feature_ratelimit.py.tmpl", rate=rate, capacity=rate * 2, bug_line=bug_line
    )
    tests = test_module(
        project.test_path(path),
        f"{pkg}.rate_limit",
        [
            f"from {pkg}.rate_limit import Buckets, TokenBucket",
            "",
            "",
            "class Clock:",
            "    def __init__(self):",
            "        self.now = 0.0",
            "",
            "    def __call__(self) -> float:",
            "        return self.now",
        ],
        {
            "test_burst_up_to_capacity": [
                "bucket = TokenBucket(rate=1, capacity=3, clock=Clock())",
                "assert [bucket.take() for _ in range(4)] == [True, True, True, False]",
            ],
            "test_bucket_never_exceeds_capacity": [
                "clock = Clock()",
                f"bucket = TokenBucket(rate={rate}, capacity={rate}, clock=clock)",
                "clock.now += 3",
                f"assert bucket.available <= {rate}",
            ],
            "test_refills_over_time": [
                "clock = Clock()",
                "bucket = TokenBucket(rate=2, capacity=2, clock=clock)",
                "bucket.take(2)",
                "clock.now += 0.5",
                "assert bucket.take()",
            ],
            "test_buckets_are_per_client": [
                "buckets = Buckets()",
                "assert buckets.for_client('a') is not buckets.for_client('b')",
            ],
        },
    )
    anchor = f'app = FastAPI(title="{pkg}")'
    new = (
        anchor + '\nbuckets = Buckets()\n\n\n@app.middleware("http")\n'
        "async def rate_limit(request, call_next):\n"
        '    client_id = request.headers.get("x-client-id", request.client.host)\n'
        "    if not buckets.for_client(client_id).take():\n"
        '        return JSONResponse({"detail": "rate limit exceeded"}, status_code=429)\n'
        "    return await call_next(request)"
    )
    values = {"rate": rate, "burst": float(rate * 4)}
    fixed = "        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)"
    wiring = (project.src("api"), anchor, new)
    return finish(
        project, "ratelimit", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def audit(project: Project, rng: random.Random) -> Feature:
    pkg, e = project.pkg, project.main
    path = project.src("audit")
    bug_line = "    changed = sorted(key for key in after if key in before)"
    module = resources.render("feature_audit.py.tmpl", e=e, pkg=pkg, bug_line=bug_line)
    f1, f2 = e.fields[0].name, e.fields[1].name
    tests = test_module(
        project.test_path(path),
        f"{pkg}.audit",
        [
            f"from {pkg}.audit import Change, diff",
        ],
        {
            "test_diff_only_lists_changed_fields": [
                f"before = {{'{f1}': 1, '{f2}': 'a'}}",
                f"after = {{'{f1}': 1, '{f2}': 'b'}}",
                f"assert [c.field for c in diff(before, after)] == ['{f2}']",
            ],
            "test_diff_sees_added_fields": [
                f"assert diff({{}}, {{'{f1}': 2}}) == [Change('{f1}', None, 2)]"
            ],
            "test_diff_of_equal_dicts_is_empty": [
                f"assert diff({{'{f1}': 1}}, {{'{f1}': 1}}) == []"
            ],
        },
    )
    svc = project.file(project.service_path(e))
    anchor = f"        self._repository.add({e.name})"
    if svc.text.count(anchor) != 1:
        anchor = next(f for f in svc.funcs if f.name == f"create_{e.name}").head
    new = (
        anchor + f'\n        record_change(self._repository.session, "{e.name}", {e.name}.id, '
        f'"api", {{}}, {e.name}.to_dict())'
    )
    values = {"f2": f2, "both": repr(sorted((f1, f2)))}
    fixed = (
        "    changed = sorted(key for key in before.keys() | after.keys() if before.get(key) "
        "!= after.get(key))"
    )
    wiring = (project.service_path(e), anchor, new)
    return finish(
        project, "audit", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )
