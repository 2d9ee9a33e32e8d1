"""What the numbers rest on: the control arm is the ceiling, and the answerer and
judge see exactly what they should."""

from __future__ import annotations

import pytest
from conftest import SMALL, compose_config, group_options, run_point

from benchmark.answerer.base import AnswerRequest
from benchmark.config.schema import validate
from benchmark.judge.base import JudgeRequest
from benchmark.run.compaction import find_points, segments
from benchmark.run.parts import Parts, build, build_parts
from benchmark.run.pipeline import run_job
from benchmark.transcript.models import Transcript
from benchmark.transcript.synthetic import generate

# Every shipped policy that runs offline (opaque needs its provider: tests/test_opaque.py).
POLICIES = [
    p for p in group_options("policy") if "endpoint" not in compose_config([f"policy={p}"]).policy
]


def _jobs(cache, policies, *overrides: str) -> dict:
    """``run_job`` per policy on the default experiment (``overrides`` applied), its
    sessions read from the session cache ``cache``."""
    results = {}
    for policy in policies:
        overrides_ = [f"policy={policy}", "tracking=disabled", f"cache.dir={cache}", *overrides]
        results[policy] = run_job(validate(compose_config(overrides_)))
    return results


@pytest.fixture(scope="module")
def default_results(default_sessions):
    """The default experiment's figures, at full size, for the control arm and truncation
    (the session cache of ``default_sessions``: the sessions are generated once)."""
    return _jobs(default_sessions[2], ["none", "truncate"])


@pytest.fixture(scope="module")
def policy_results(default_sessions):
    """Every LLM-free policy on the default experiment's first session (default window):
    what holds for every policy holds on one session with compaction points, at a twelfth
    of the cost."""
    return _jobs(default_sessions[2], POLICIES, "transcript.sessions=1")


def test_default_experiment_probes_every_type(default_results, policy_results):
    result = default_results["none"]
    assert {r.probe.type for r in result.probe_results} == {
        "recall",
        "artifact",
        "continuation",
        "decision",
    }
    # Same probes for every policy: they depend on transcript and probe config only.
    for results in (default_results, policy_results):
        ids = {p: [r.probe.id for r in res.probe_results] for p, res in results.items()}
        assert all(v == ids["none"] for v in ids.values())


def test_control_arm_is_the_ceiling(default_results, policy_results):
    for results in (default_results, policy_results):
        control = results["none"].scores().overall
        for policy, result in results.items():
            assert control >= result.scores().overall, policy
    # Compaction must actually cost something for the policies that drop the region.
    control = default_results["none"].scores().overall
    assert control - default_results["truncate"].scores().overall > 1.0


def test_truncate_forgets_the_middle(default_results):
    def middle_recall(result):
        scores = [
            r.score
            for r in result.probe_results
            if r.probe.type == "recall" and 0.25 <= r.probe.position <= 0.75 and r.score is not None
        ]
        assert len(scores) >= 4
        return sum(scores) / len(scores)

    control, truncated = (
        middle_recall(default_results["none"]),
        middle_recall(default_results["truncate"]),
    )
    assert control >= 3.0
    assert control - truncated >= 2.0


def test_compaction_keeps_fewer_tokens(policy_results):
    assert set(policy_results) == set(POLICIES)
    before = policy_results["none"].metrics()
    assert before["headline/more/kept_fraction"] == pytest.approx(1.0)
    for policy in (p for p in POLICIES if p != "none"):
        metrics = policy_results[policy].metrics()
        assert metrics["tokens/before"] == before["tokens/before"]
        assert metrics["tokens/after"] < before["tokens/after"], policy


class Spy:
    """Wraps a real answerer or judge and records every request it gets."""

    def __init__(self, inner, method):
        self.inner, self.method, self.requests = inner, method, []
        setattr(self, method, self._call)
        self.CRITERIA = getattr(inner, "CRITERIA", None)

    def _call(self, request):
        self.requests.append(request)
        return getattr(self.inner, self.method)(request)


def with_sentinels(t: Transcript, start: int, stop: int, tag: str) -> Transcript:
    """Append a sentinel line to every message in [start, stop)."""
    msgs = list(t.messages)
    for i in range(start, stop):
        m = msgs[i]
        msgs[i] = m.model_copy(update={"content": f"{m.content or ''}\n{tag}-{i}"})
    return t.model_copy(update={"messages": msgs})


@pytest.mark.parametrize("policy", POLICIES)
def test_answerer_sees_only_the_compacted_context(policy):
    config = validate(compose_config([*SMALL, f"policy={policy}"]))
    t = generate(seed=5, target_tokens=30000)
    point = find_points(t, config.compaction)[0]
    t = with_sentinels(t, point.head_end, point.tail_start, "REGION_SENTINEL")
    t = with_sentinels(t, point.end, len(t.messages), "FUTURE_SENTINEL")
    answerer = Spy(build(config.answerer, "answerer", "answer"), "answer")
    judge = Spy(build(config.judge, "judge", "judge"), "judge")
    pol = build(config.policy, "policy", "compact")
    kept = pol.compact(segments(t, point))
    result = run_point(config, t, point, pol, answerer, judge)
    assert answerer.requests
    allowed = {m.render() for m in kept}
    for request in answerer.requests:
        assert isinstance(request, AnswerRequest)
        assert set(AnswerRequest.model_fields) == {"question", "context", "form"}
        assert request.context == result.context == kept
        text = request.model_dump_json()
        assert "FUTURE_SENTINEL" not in text  # never past the compaction point
        # Region sentinels reach the answerer only inside messages the policy kept.
        for m in request.context:
            assert m.render() in allowed
    if policy in ("truncate", "anchor_index"):  # drop the region's prose
        assert not any("REGION_SENTINEL" in r.model_dump_json() for r in answerer.requests)
    if policy == "none":
        assert all("REGION_SENTINEL" in r.model_dump_json() for r in answerer.requests)


def test_judge_input_never_names_the_policy():
    sentinel = "POLICY_NAME_SENTINEL_7f3a"
    for policy in POLICIES:
        config = validate(compose_config([*SMALL, f"policy={policy}", f"policy.name={sentinel}"]))
        t = generate(seed=6, target_tokens=30000)
        point = find_points(t, config.compaction)[0]
        judge = Spy(build(config.judge, "judge", "judge"), "judge")
        pol = build(config.policy, "policy", "compact")
        run_point(config, t, point, pol, build(config.answerer, "answerer", "answer"), judge)
        assert judge.requests
        for request in judge.requests:
            assert isinstance(request, JudgeRequest)
            text = request.model_dump_json()
            assert sentinel not in text
            for name in (*(p for p in POLICIES if "_" in p), type(pol).__name__):
                assert name not in text, (policy, name)


def test_failed_answers_are_counted_not_scored():
    config = validate(compose_config([*SMALL, "policy=none"]))
    t = generate(seed=7, target_tokens=30000)
    point = find_points(t, config.compaction)[0]

    class Broken:
        def answer(self, request):
            raise ConnectionError("endpoint unreachable")

    pol = build(config.policy, "policy", "compact")
    res = run_point(config, t, point, pol, Broken(), build(config.judge, "judge", "judge"))
    assert res.probes and all(r.failed and r.score is None for r in res.probes)
    assert all("endpoint unreachable" in r.answer.error for r in res.probes)
    from benchmark.run.results import JobResult

    job = JobResult(policy="x", transcripts=[t.id], rubric=config.rubric, points=[res])
    metrics = job.metrics()
    assert metrics["probes/failed_answers"] == len(res.probes)
    assert "headline/overall" not in metrics  # nothing scored, nothing invented


def test_same_config_same_scores(tmp_path):
    """Reproducible: a rerun (cold probe cache, then warm) gives identical probes and scores."""
    overrides = [*SMALL, f"cache.dir={tmp_path}"]
    runs = [run_job(validate(compose_config(overrides))) for _ in range(2)]
    assert [r.probe for r in runs[0].probe_results] == [r.probe for r in runs[1].probe_results]
    assert runs[0].metrics() == runs[1].metrics()
    assert list(tmp_path.glob("probes/*.json"))  # the second run read the cache


class RecordingPolicy:
    """A real policy that also records the segments it is given."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def compact(self, segs):
        self.seen.append(segs)
        return self.inner.compact(segs)


@pytest.mark.parametrize("replay", ["iterative", "independent"])
def test_iterative_replay_compacts_the_previous_compacted_context(replay):
    from benchmark.policy import AnchorIndex
    from benchmark.policy.anchor_index import HEADING

    config = validate(compose_config([*SMALL, f"compaction.replay={replay}"]))
    parts = build_parts(config)
    policy = RecordingPolicy(AnchorIndex())
    result = run_job(config, Parts(policy, parts.answerer, parts.judge, parts.ledger))
    assert len(policy.seen) == len(result.points) >= 2
    later = policy.seen[1]
    carries_index = any((m.content or "").startswith(HEADING) for m in later.region)
    # Iterative: the second compaction sees the first one's index, not the raw history.
    assert carries_index == (replay == "iterative")
    assert all(m in result.points[0].context for m in later.head)


def test_control_arm_is_the_same_under_both_replays():
    contexts = [
        [
            p.context
            for p in run_job(
                validate(compose_config([*SMALL, "policy=none", f"compaction.replay={r}"]))
            ).points
        ]
        for r in ("iterative", "independent")
    ]
    assert contexts[0] == contexts[1]


def test_anchored_iterative_merges_under_iterative_replay():
    """At a later point the policy sees its own summary first and sends only the new span."""
    from benchmark.policy import AnchoredIterative
    from benchmark.summarizer import ExtractiveSummarizer

    class Spy(ExtractiveSummarizer):
        requests: list = []

        def summarize(self, request):
            self.requests.append(request)
            return super().summarize(request)

    config = validate(compose_config(SMALL))
    spy = Spy()
    parts = build_parts(config)
    policy = AnchoredIterative(summarizer=spy)
    result = run_job(config, Parts(policy, parts.answerer, parts.judge, parts.ledger))
    assert len(result.points) >= 2 and len(spy.requests) == len(result.points)
    later = spy.requests[1]
    assert later.previous_summary is not None  # merged into, not started afresh
    assert not any(later.previous_summary in (m.content or "") for m in later.region)
