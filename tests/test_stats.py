"""Confidence intervals: the jackknife t interval's closed form, CI and p-value that agree,
no test on too few clusters, and the per-run metrics and scorecard that carry them."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import SMALL, compose_config
from rich.console import Console
from scipy import stats as scipy_stats

from benchmark.config.schema import validate
from benchmark.rubric import Rubric, aggregate
from benchmark.run.pipeline import run_job
from benchmark.run.results import JobResult
from benchmark.scoring import scorecard
from benchmark.scoring.stats import (
    MIN_CLUSTERS_FOR_TEST,
    cluster_interval,
    describe,
    no_test_reason,
    paired_difference,
    ratio_interval,
    rollup_interval,
)


def clustered(rng, clusters: int, size: int, between: float, within: float, mean: float = 2.0):
    """Values with a shared random effect per cluster (probes of one compaction point)."""
    effects = rng.normal(0, between, clusters)
    values = np.concatenate([mean + e + rng.normal(0, within, size) for e in effects])
    labels = [(f"t{c}", 0) for c in range(clusters) for _ in range(size)]
    return values.tolist(), labels


def width(est) -> float:
    return est.high - est.low


def test_equal_clusters_give_the_t_interval_of_the_cluster_means():
    rng = np.random.default_rng(0)
    values, labels = clustered(rng, clusters=6, size=4, between=1.0, within=0.3)
    est = cluster_interval(values, labels)
    means = np.reshape(values, (6, 4)).mean(axis=1)
    half = scipy_stats.t.ppf(0.975, 5) * means.std(ddof=1) / np.sqrt(6)
    assert est.mean == pytest.approx(means.mean())
    assert (est.low, est.high) == pytest.approx((means.mean() - half, means.mean() + half))
    assert (est.n, est.clusters, est.df) == (24, 6, pytest.approx(5))


def test_paired_p_value_is_the_t_test_on_the_same_standard_error():
    rng = np.random.default_rng(1)
    b, labels = clustered(rng, clusters=8, size=5, between=0.8, within=0.5)
    a = [v + 0.3 + rng.normal(0, 0.4) for v in b]
    diff = paired_difference(a, b, labels)
    per_cluster = np.reshape(np.subtract(a, b), (8, 5)).mean(axis=1)
    expected = scipy_stats.ttest_1samp(per_cluster, 0.0)
    assert diff.p_value == pytest.approx(expected.pvalue)
    assert diff.significant == (expected.pvalue < 0.05)


def test_ci_excludes_zero_exactly_when_p_is_below_five_percent():
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(300):
        clusters = int(rng.integers(MIN_CLUSTERS_FOR_TEST, 25))
        sizes = rng.integers(1, 12, clusters)
        labels = np.repeat(np.arange(clusters), sizes).tolist()
        b = rng.integers(0, 6, len(labels)).astype(float)
        shift = rng.normal(0, 0.6, clusters)[labels]
        a = np.clip(np.round(b + shift + rng.normal(0, 1, len(labels))), 0, 5)
        diff = paired_difference(a, b, labels)
        excludes = diff.low > 0 or diff.high < 0
        assert excludes == (diff.p_value < 0.05) == diff.significant
        seen.add(excludes)
    assert seen == {True, False}  # both sides were exercised


def test_no_p_value_below_five_clusters():
    rng = np.random.default_rng(3)
    for clusters in range(1, MIN_CLUSTERS_FOR_TEST):
        b, labels = clustered(rng, clusters=clusters, size=10, between=0.1, within=0.1)
        a = [v + 3.0 for v in b]  # a huge, obvious shift: still no test on so few clusters
        diff = paired_difference(a, b, labels)
        assert diff.p_value is None and not diff.significant
        assert no_test_reason(clusters) == (
            f"no p-value: {clusters} cluster(s) < 5; too few to test"
        )
    assert no_test_reason(MIN_CLUSTERS_FOR_TEST) is None
    assert paired_difference(a + [1.0], b + [0.0], labels + [("other", 1)]).p_value is not None


def test_one_cluster_has_no_interval():
    one = cluster_interval([1.0, 2.0, 4.0], ["a"] * 3)
    assert one.mean == pytest.approx(7 / 3) and one.clusters == 1
    assert np.isnan(one.low) and np.isnan(one.high) and not one.defined
    diff = paired_difference([3.0, 3.0], [1.0, 2.0], ["a", "a"])
    assert diff.mean == 1.5 and diff.p_value is None and not diff.significant
    assert np.isnan(diff.low)
    single = cluster_interval([3.0], ["a"])
    assert single.n == 1 and not single.defined
    assert "n/a" in describe(1)
    assert describe(14) == "95% CI: cluster jackknife t, G-1 = 13 df, 14 clusters"


def test_unequal_cluster_sizes_lower_the_degrees_of_freedom():
    rng = np.random.default_rng(4)
    sizes = [2, 3, 40, 5, 30, 4]
    labels = np.repeat(np.arange(6), sizes).tolist()
    values = rng.integers(0, 6, len(labels)).astype(float)
    est = cluster_interval(values, labels)
    assert 1 < est.df < 5  # a few large clusters carry most of the weight
    equal = cluster_interval(values[:30], np.repeat(np.arange(6), 5).tolist())
    assert equal.df == pytest.approx(5)


def test_interval_covers_a_known_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    trials, covered = 300, 0
    for _ in range(trials):
        values, labels = clustered(rng, clusters=6, size=5, between=0.5, within=1.0)
        est = cluster_interval(values, labels)
        covered += est.low <= 2.0 <= est.high
    assert 0.9 <= covered / trials <= 0.99


def test_interval_shrinks_with_more_probes():
    rng = np.random.default_rng(5)
    small = rng.normal(2, 1, 25)
    large = rng.normal(2, 1, 625)
    narrow = cluster_interval(large, range(len(large)))
    wide = cluster_interval(small, range(len(small)))
    assert width(narrow) < width(wide) / 3  # ~1/sqrt(25) of it


def test_clustering_widens_the_interval_when_probes_of_a_point_move_together():
    rng = np.random.default_rng(6)
    values, labels = clustered(rng, clusters=10, size=20, between=1.0, within=0.2)
    by_cluster = cluster_interval(values, labels)
    independent = cluster_interval(values, range(len(values)))
    assert by_cluster.mean == pytest.approx(independent.mean)
    assert (by_cluster.n, by_cluster.clusters) == (200, 10)
    assert independent.clusters == 200
    assert width(by_cluster) > 3 * width(independent)


def test_bounded_scale_keeps_the_interval_inside_and_leans_away_from_the_end():
    values = [0.0] * 20 + [1.0, 0.0, 2.0, 0.0, 5.0] + [0.0] * 5
    labels = [i // 5 for i in range(30)]
    free = cluster_interval(values, labels)
    bounded = cluster_interval(values, labels, limits=(0, 5))
    assert free.low < 0 <= bounded.low < bounded.mean < bounded.high <= 5
    assert bounded.high - bounded.mean > bounded.mean - bounded.low


def test_a_clear_shift_is_significant():
    rng = np.random.default_rng(7)
    b, labels = clustered(rng, clusters=15, size=4, between=0.8, within=0.5)
    a = [v + 1.0 + rng.normal(0, 0.3) for v in b]  # same probes, one point better
    diff = paired_difference(a, b, labels)
    assert diff.mean == pytest.approx(np.mean(np.subtract(a, b)))
    assert 0 < diff.low <= diff.mean <= diff.high
    assert diff.significant and diff.p_value < 0.01
    assert (diff.n, diff.clusters) == (60, 15)
    flipped = paired_difference(b, a, labels)
    assert flipped.mean == pytest.approx(-diff.mean) and flipped.high < 0 and flipped.significant
    assert flipped.p_value == pytest.approx(diff.p_value)


def test_identical_inputs_are_not_different():
    rng = np.random.default_rng(8)
    a, labels = clustered(rng, clusters=8, size=6, between=1.0, within=1.0)
    diff = paired_difference(a, list(a), labels)
    assert (diff.low, diff.mean, diff.high) == (0, 0, 0)
    assert diff.p_value == 1.0 and not diff.significant
    constant = cluster_interval([0.1] * 30, [i % 7 for i in range(30)])
    assert constant.low == constant.mean == constant.high


def test_p_values_under_no_difference_are_rarely_small():
    rng = np.random.default_rng(9)
    small = 0
    for _ in range(200):
        a, labels = clustered(rng, clusters=6, size=3, between=0.5, within=1.0)
        b = [v + rng.normal(0, 0.5) for v in a]
        small += paired_difference(a, b, labels).p_value < 0.05
    assert small <= 20  # about 10 expected


def test_ratio_interval():
    # Per cluster the policy keeps a share of the control's score: 0.5, 0.6, ..., 0.9.
    control = [4.0, 2.0] * 5
    shares = np.repeat([0.5, 0.6, 0.7, 0.8, 0.9], 2)
    policy = (np.array(control) * shares).tolist()
    labels = np.repeat(np.arange(5), 2).tolist()
    est = ratio_interval(policy, control, labels)
    # Equal control totals per cluster: the ratio is the mean of the cluster shares, and
    # its interval the t interval of those shares.
    half = scipy_stats.t.ppf(0.975, 4) * np.std([0.5, 0.6, 0.7, 0.8, 0.9], ddof=1) / np.sqrt(5)
    assert est.mean == pytest.approx(0.7)
    assert (est.low, est.high) == pytest.approx((0.7 - half, 0.7 + half))
    exact = ratio_interval([2.0, 4.0, 6.0], [1.0, 2.0, 3.0], ["a", "b", "c"])
    assert (exact.low, exact.mean, exact.high) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="den sums to 0"):
        ratio_interval([1.0, 2.0], [0.0, 0.0], ["a", "b"])


def test_degenerate_inputs():
    with pytest.raises(ValueError, match="no values"):
        cluster_interval([], [])
    with pytest.raises(ValueError, match="entries"):
        cluster_interval([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="finite"):
        cluster_interval([1.0, float("nan")], ["a", "b"])
    with pytest.raises(ValueError, match="length"):
        paired_difference([1.0], [1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="confidence"):
        cluster_interval([1.0], ["a"], confidence=1.0)


RUBRIC = Rubric(
    name="t",
    dimensions={"a": {"x": 1.0, "y": 3.0}, "b": {"z": 1.0}, "never": {"w": 1.0}},
    probe_criteria={"recall": ["x", "y", "w"], "artifact": ["z"]},
)


def test_rollup_interval_belongs_to_the_rubric_rollup():
    rng = np.random.default_rng(10)
    judgments, labels = [], []
    for i in range(60):
        cluster = (f"t{i % 4}", i % 3)
        if i % 3:
            judgments.append({"x": float(rng.integers(0, 3)), "y": float(rng.integers(0, 3))})
        else:
            judgments.append({"z": float(rng.integers(4, 6))})
        labels.append(cluster)
    estimates = rollup_interval(RUBRIC, judgments, labels)
    observed = aggregate(RUBRIC, judgments)
    assert set(estimates) == {"overall", "a", "b"}  # "never" was not scored
    assert estimates["overall"].mean == pytest.approx(observed.overall)
    for dim, value in observed.dimensions.items():
        assert estimates[dim].mean == pytest.approx(value)
    for est in estimates.values():
        assert 0 <= est.low <= est.mean <= est.high <= RUBRIC.scale_max and est.low < est.high
        assert est.n == 60
    # Only the clusters that scored a dimension's criteria inform its interval.
    assert estimates["overall"].clusters == 12
    assert estimates["a"].clusters == 8  # x and y are scored at points 1 and 2
    assert estimates["b"].clusters == 4  # z at point 0 only
    # The roll-up weighs dimensions equally, not probes: the mean of per-probe overalls
    # is another statistic, and an interval around it would miss the reported overall.
    per_probe = np.mean([aggregate(RUBRIC, [j]).overall for j in judgments])
    assert not estimates["overall"].low <= per_probe <= estimates["overall"].high


def test_rollup_interval_of_one_cluster_is_undefined():
    estimates = rollup_interval(RUBRIC, [{"x": 1.0}, {"z": 4.0}], ["a", "a"])
    assert estimates["overall"].mean == pytest.approx(
        aggregate(RUBRIC, [{"x": 1.0}, {"z": 4.0}]).overall
    )
    assert not any(e.defined for e in estimates.values())


@pytest.fixture(scope="module")
def job() -> JobResult:
    return run_job(validate(compose_config([*SMALL, "execution.progress=off"])))


def test_job_metrics_carry_intervals(job):
    metrics = job.metrics()
    scores = job.scores()
    keys = ["headline/overall", *(f"rubric/{d}" for d in scores.dimensions)]
    assert len(scores.dimensions) == 5  # offline: instruction_following is not measured
    assert job.not_measured == ["instruction_following"]
    for name in keys:
        low, high = metrics[f"{name}_lower"], metrics[f"{name}_upper"]
        assert low <= metrics[name] <= high, name
        assert low >= 0 and high <= job.rubric.scale_max
    for ptype in {r.probe.type for r in job.probe_results}:
        key = f"type/{ptype}"
        assert metrics[f"{key}_lower"] <= metrics[key] <= metrics[f"{key}_upper"]
    assert job.metrics() == metrics  # deterministic: identical on every call
    assert not any("p_value" in name for name in metrics)


def test_intervals_follow_the_content_not_a_stale_cache(job):
    fewer = job.model_copy(update={"points": job.points[:1]})
    assert len(fewer.estimates()) > 0 and fewer.intervals() == {}  # one cluster: no CI
    assert not fewer.estimates()["headline/overall"].defined
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


def test_scorecard_of_a_two_cluster_run_names_the_method_and_gives_no_p_value(job):
    metrics = job.metrics()
    text = scorecard.render(job, Console(width=300, file=io.StringIO()))
    low, high = metrics["headline/overall_lower"], metrics["headline/overall_upper"]
    assert f"{metrics['headline/overall']:.2f} [{low:.2f}, {high:.2f}]" in text
    flat = " ".join(text.split())  # the caption wraps at the table's width
    assert "95% CI: cluster jackknife t, G-1 = 1 df, 2 clusters" in flat
    assert "no p-value: 2 cluster(s) < 5; too few to test" in flat
    assert "p=" not in text and "p<" not in text and "*" not in text


def test_scorecard_of_one_cluster_says_n_a(job):
    fewer = job.model_copy(update={"points": job.points[:1]})
    text = scorecard.render(fewer, Console(width=300, file=io.StringIO()))
    assert f"{fewer.scores().overall:.2f} [n/a]" in text
    assert "95% CI: n/a with 1 cluster" in " ".join(text.split())


def test_scorecard_title_sums_up_many_transcripts(job):
    names = [f"rollout-{n:02d}" for n in range(25)]
    many = job.model_copy(update={"transcripts": names})
    text = scorecard.render(many, Console(width=300, file=io.StringIO()))
    title = next(line for line in text.splitlines() if "Scorecard:" in line)
    assert "transcripts=25 (rollout-00, rollout-01, rollout-02 and 22 more" in title
    assert "rollout-24" not in text
    few = job.model_copy(update={"transcripts": names[:2]})
    text = scorecard.render(few, Console(width=300, file=io.StringIO()))
    assert "transcripts=rollout-00, rollout-01" in text
