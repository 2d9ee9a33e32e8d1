"""Confidence intervals: they cover what they claim, widen for clustered probes,
and the per-run metrics carry them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SMALL, compose_config

from benchmark.config import validate
from benchmark.pipeline import run_job
from benchmark.results import JobResult
from benchmark.rubric import Rubric, aggregate
from benchmark.stats import (
    ClusterResample,
    cluster_bootstrap,
    paired_difference,
    percentile_interval,
    rollup_bootstrap,
)


def clustered(rng, clusters: int, size: int, between: float, within: float, mean: float = 2.0):
    """Values with a shared random effect per cluster (probes of one compaction point)."""
    effects = rng.normal(0, between, clusters)
    values = np.concatenate([mean + e + rng.normal(0, within, size) for e in effects])
    labels = [(f"t{c}", 0) for c in range(clusters) for _ in range(size)]
    return values.tolist(), labels


def width(est) -> float:
    return est.high - est.low


def test_interval_covers_a_known_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    trials, covered = 200, 0
    for trial in range(trials):
        values, labels = clustered(rng, clusters=40, size=5, between=0.5, within=1.0)
        est = cluster_bootstrap(values, labels, resamples=500, seed=trial)
        covered += est.low <= 2.0 <= est.high
    assert 0.88 <= covered / trials <= 0.99


def test_interval_shrinks_with_more_probes():
    rng = np.random.default_rng(1)
    small = rng.normal(2, 1, 25)
    large = rng.normal(2, 1, 625)
    narrow = cluster_bootstrap(large, range(len(large)))
    wide = cluster_bootstrap(small, range(len(small)))
    assert width(narrow) < width(wide) / 3  # ~1/sqrt(25) of it


def test_clustering_widens_the_interval_when_probes_of_a_point_move_together():
    rng = np.random.default_rng(2)
    values, labels = clustered(rng, clusters=10, size=20, between=1.0, within=0.2)
    by_cluster = cluster_bootstrap(values, labels)
    independent = cluster_bootstrap(values, range(len(values)))
    assert by_cluster.mean == pytest.approx(independent.mean)
    assert (by_cluster.n, by_cluster.clusters) == (200, 10)
    assert independent.clusters == 200
    assert width(by_cluster) > 3 * width(independent)


def test_same_seed_same_interval():
    rng = np.random.default_rng(3)
    values, labels = clustered(rng, clusters=12, size=4, between=0.5, within=0.5)
    assert cluster_bootstrap(values, labels, seed=7) == cluster_bootstrap(values, labels, seed=7)
    assert cluster_bootstrap(values, labels, seed=7) != cluster_bootstrap(values, labels, seed=8)
    # Cluster labels are coded by first appearance, never by hash: equal labels, equal draws.
    renamed = [(f"other-{t}", p) for t, p in labels]
    assert cluster_bootstrap(values, renamed, seed=7) == cluster_bootstrap(values, labels, seed=7)


def test_a_clear_shift_is_significant():
    rng = np.random.default_rng(4)
    b, labels = clustered(rng, clusters=15, size=4, between=0.8, within=0.5)
    a = [v + 1.0 + rng.normal(0, 0.3) for v in b]  # same probes, one point better
    diff = paired_difference(a, b, labels)
    assert diff.mean == pytest.approx(np.mean(np.subtract(a, b)))
    assert 0 < diff.low <= diff.mean <= diff.high
    assert diff.significant and diff.p_value < 0.01
    assert (diff.n, diff.clusters) == (60, 15)
    flipped = paired_difference(b, a, labels)
    assert flipped.mean == pytest.approx(-diff.mean) and flipped.high < 0 and flipped.significant


def test_identical_inputs_are_not_different():
    rng = np.random.default_rng(5)
    a, labels = clustered(rng, clusters=8, size=6, between=1.0, within=1.0)
    diff = paired_difference(a, list(a), labels)
    assert diff.low <= 0 <= diff.high and (diff.low, diff.mean, diff.high) == (0, 0, 0)
    assert diff.p_value == 1.0 and not diff.significant


def test_p_values_under_no_difference_are_rarely_small():
    rng = np.random.default_rng(6)
    small = 0
    for trial in range(100):
        a, labels = clustered(rng, clusters=30, size=3, between=0.5, within=1.0)
        b = [v + rng.normal(0, 0.5) for v in a]
        small += paired_difference(a, b, labels, resamples=500, seed=trial).p_value < 0.05
    assert small <= 12  # about 5 expected


def test_degenerate_inputs():
    with pytest.raises(ValueError, match="no values"):
        cluster_bootstrap([], [])
    with pytest.raises(ValueError, match="entries"):
        cluster_bootstrap([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="finite"):
        cluster_bootstrap([1.0, float("nan")], ["a", "b"])
    with pytest.raises(ValueError, match="length"):
        paired_difference([1.0], [1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="confidence"):
        cluster_bootstrap([1.0], ["a"], confidence=1.0)
    with pytest.raises(ValueError, match="resamples"):
        cluster_bootstrap([1.0], ["a"], resamples=0)

    # One cluster: nothing varies between resamples, so the interval is the mean itself.
    one = cluster_bootstrap([1.0, 2.0, 4.0], ["a"] * 3)
    assert (one.low, one.mean, one.high, one.clusters) == (7 / 3, 7 / 3, 7 / 3, 1)
    diff = paired_difference([3.0, 3.0], [1.0, 2.0], ["a", "a"])
    assert diff.mean == 1.5 and diff.p_value == 1.0 and not diff.significant

    single = cluster_bootstrap([3.0], ["a"])
    assert (single.low, single.high, single.n) == (3.0, 3.0, 1)
    constant = cluster_bootstrap([0.1] * 30, [i % 7 for i in range(30)])
    assert constant.low == constant.mean == constant.high


def test_resampled_totals_are_cluster_draws():
    resample = ClusterResample(["a", "a", "b", "c"], resamples=50, seed=0)
    assert resample.counts.shape == (50, 3)
    assert (resample.counts.sum(axis=1) == 3).all()  # each resample draws 3 clusters
    totals = resample.totals(np.array([1.0, 1.0, 10.0, 100.0]))
    assert totals.shape == (50,)
    assert np.allclose(totals, resample.counts @ np.array([2.0, 10.0, 100.0]))


def test_percentile_interval_skips_undefined_resamples():
    samples = np.array([[1.0, np.nan], [2.0, np.nan], [np.nan, np.nan], [3.0, np.nan]])
    low, high = percentile_interval(samples, confidence=0.5)
    assert (low[0], high[0]) == (1.5, 2.5)
    assert np.isnan(low[1]) and np.isnan(high[1])


RUBRIC = Rubric(
    name="t",
    dimensions={"a": {"x": 1.0, "y": 3.0}, "b": {"z": 1.0}, "never": {"w": 1.0}},
    probe_criteria={"recall": ["x", "y", "w"], "artifact": ["z"]},
)


def test_rollup_interval_belongs_to_the_rubric_rollup():
    rng = np.random.default_rng(8)
    judgments, labels = [], []
    for i in range(60):
        cluster = (f"t{i % 4}", i % 3)
        if i % 3:
            judgments.append({"x": float(rng.integers(0, 3)), "y": float(rng.integers(0, 3))})
        else:
            judgments.append({"z": float(rng.integers(4, 6))})
        labels.append(cluster)
    estimates = rollup_bootstrap(RUBRIC, judgments, labels)
    observed = aggregate(RUBRIC, judgments)
    assert set(estimates) == {"overall", "a", "b"}  # "never" was not scored
    assert estimates["overall"].mean == pytest.approx(observed.overall)
    for dim, value in observed.dimensions.items():
        assert estimates[dim].mean == pytest.approx(value)
    for est in estimates.values():
        assert est.low <= est.mean <= est.high and est.low < est.high
        assert (est.n, est.clusters) == (60, 12)
    # The roll-up weighs dimensions equally, not probes: the mean of per-probe overalls
    # is another statistic, and an interval around it would miss the reported overall.
    per_probe = np.mean([aggregate(RUBRIC, [j]).overall for j in judgments])
    assert not estimates["overall"].low <= per_probe <= estimates["overall"].high


def test_bootstrap_is_fast():
    import time

    rng = np.random.default_rng(9)
    values, labels = clustered(rng, clusters=60, size=5, between=0.5, within=1.0)
    b = [v + rng.normal(0, 0.5) for v in values]
    cluster_bootstrap(values, labels)  # warm numpy up
    start = time.perf_counter()
    cluster_bootstrap(values, labels)
    paired_difference(values, b, labels)
    assert time.perf_counter() - start < 0.1  # 2 x 2000 resamples over 300 probes


@pytest.fixture(scope="module")
def job() -> JobResult:
    return run_job(validate(compose_config([*SMALL, "execution.progress=off"])))


def test_job_metrics_carry_intervals(job):
    metrics = job.metrics()
    scores = job.scores()
    names = ["overall", *scores.dimensions]
    assert len(scores.dimensions) == 5  # offline: instruction_following is not measured
    assert job.not_measured == ["instruction_following"]
    for name in names:
        low, high = metrics[f"{name}/ci_low"], metrics[f"{name}/ci_high"]
        assert low <= metrics[name] <= high, name
        assert low >= 0 and high <= job.rubric.scale_max
    for ptype in {r.probe.type for r in job.probe_results}:
        key = f"type/{ptype}"
        assert metrics[f"{key}/ci_low"] <= metrics[key] <= metrics[f"{key}/ci_high"]
    assert job.metrics() == metrics  # fixed seed: identical on every call


def test_intervals_follow_the_content_not_a_stale_cache(job):
    fewer = job.model_copy(update={"points": job.points[:1]})
    assert fewer.intervals() != job.intervals()
    alone = JobResult(policy="x", transcripts=job.transcripts, rubric=job.rubric, points=[])
    assert alone.intervals() == {}


def test_rows_carry_dimension_scores(job):
    rows = job.rows()
    dims = list(job.rollup_rubric.dimensions)  # offline: without instruction_following
    assert len(rows) == len(job.probe_results)
    for row, result in zip(rows, job.probe_results, strict=True):
        assert {f"d/{d}" for d in dims} <= set(row)
        expected = aggregate(job.rollup_rubric, [result.judgment.scores()]).dimensions
        for d in dims:
            assert row[f"d/{d}"] == expected.get(d)
    recall = next(row for row in rows if row["type"] == "recall")
    assert recall["d/continuity"] is None  # recall probes are not judged on continuity
    assert recall["d/accuracy"] is not None


def test_scorecard_shows_the_overall_interval(job):
    import io

    from rich.console import Console

    from benchmark import scorecard

    metrics = job.metrics()
    text = scorecard.render(job, Console(width=200, file=io.StringIO()))
    interval = f"[{metrics['overall/ci_low']:.2f}, {metrics['overall/ci_high']:.2f}]"
    assert f"{metrics['overall']:.2f} {interval}" in text
    assert "95% CI" in text
