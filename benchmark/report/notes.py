"""The report's title, the warnings under its header, and the Method section's notes: how
its numbers were computed and how to read them (after the numbers, not before)."""

from __future__ import annotations

from benchmark.report.cells import PAIRS_HEADING, constant_columns
from benchmark.report.compare import AGREEMENT_COLUMN, Comparison
from benchmark.report.retention import CONTROL
from benchmark.report.task_section import method_note as task_method
from benchmark.scoring.stats import METHOD, MIN_CLUSTERS_FOR_TEST

WARNING = "Warning: "


def title(comparison: Comparison) -> str:
    """Short: the sweep's name, never its folder's path (that is in the notes)."""
    return f"Compaction benchmark: {comparison.kind} {comparison.name or comparison.source}"


def test_notes(comparison: Comparison) -> list[str]:
    """How differences are tested, and one line on those with too few clusters to test."""
    deltas = [
        d
        for paired in (*comparison.differences, *comparison.pooled, *comparison.pairs)
        for d in (paired.overall, *paired.dimensions.values())
        if d is not None
    ]
    untested = sorted({d.clusters for d in deltas if d.p_value is None})
    notes = []
    if any(d.p_value is not None for d in deltas):
        notes.append(
            "Two-sided t-test with the interval's own standard error and df, so `*` "
            "(p below 0.05, in bold) marks exactly the intervals that exclude 0."
        )
    if untested:
        counts = ", ".join(str(c) for c in untested)
        notes.append(
            f"No p-values: {counts} cluster(s) (< {MIN_CLUSTERS_FOR_TEST}) where none is "
            "shown; too few to test."
        )
    return notes


def top_warnings(comparison: Comparison) -> list[str]:
    """What must be read before the numbers, right under the header: few clusters."""
    return few_clusters(comparison)


def method(comparison: Comparison) -> list[str]:
    """How the numbers were computed and how to read them, for the Method section at the
    page's end: scale and intervals, folded columns, retention, per-type scores, paired
    differences and their tests, every two configs, pooling."""
    probes = f"{comparison.probe_type} probes" if comparison.probe_type else "all probe types"
    out = []
    out.append(scale(comparison))
    folded = constant_columns(comparison)
    if folded:
        same = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in folded)
        out.append(f"Same on every run, so not in the table: {same}.")
    if any(row.retention.value is not None for row in comparison.rows):
        out.append(
            f"Retention vs `{CONTROL}`: a run's mean probe score over the uncompacted "
            f"control run's on the same probes ({probes}, scored in both); 1.00 keeps "
            "everything the control scored."
        )
    if comparison.probe_types:
        out.append(
            "Per probe type: each run's score on that type's probes alone, as it logged it "
            "(`type/<type>`, the overall of their roll-up), with its 95% CI."
        )
    if AGREEMENT_COLUMN in comparison.probe_types:
        out.append(
            "Next-action probes are scored by rule (5 same verb and target, 3 same target, "
            "1 same verb, 0 otherwise): `next_action` against the step the log took, "
            f"`{AGREEMENT_COLUMN}` against the answer given from the uncompacted session, "
            "which does not charge a policy for a step the agent might not have taken."
        )
    if comparison.reference is not None:
        out.append(
            f"Paired differences: run minus the `{comparison.reference}` run on the same "
            f"probes ({probes}, scored in both): the mean of per-probe differences (of "
            "the probe's score, or its dimension score), which can differ from the "
            f"difference of the roll-ups above; 95% CI by {METHOD}. Green text: above the "
            "reference, red: below; shaded when the interval excludes 0."
        )
        out.extend(test_notes(comparison))
    if comparison.pairs:
        out.append(
            f"{PAIRS_HEADING}: the row's config minus the one beside it (each later row's "
            f"minus each earlier one's) on the same probes ({probes}, scored in both), each "
            "run paired with the other config's run asked them; a config run over several "
            f"seeds is pooled over its runs; 95% CI by {METHOD}."
        )
        if comparison.reference is None:
            out.extend(test_notes(comparison))
    if comparison.pooled:
        out.append(
            "Pooled: the runs of one config that differ only in their probes (seed, "
            "transcripts, compaction or probe settings), each paired with its own reference "
            "run, resampled together."
        )
    if comparison.task is not None:
        out.append(task_method(comparison.task))
    return out


def scale(comparison: Comparison) -> str:
    """The score scale, how a score rolls up, and what the brackets are."""
    top = comparison.scale_max
    scale = f"0-{top:g}" if top is not None else "the rubric's scale"
    text = (
        f"Scores: {scale} per rubric criterion (higher is better); a dimension averages its "
        "criteria and overall averages the dimensions. Brackets are 95% confidence "
        f"intervals ({METHOD} over probes clustered by transcript and compaction point; "
        "n/a with one cluster)."
    )
    return text


def few_clusters(comparison: Comparison) -> list[str]:
    """One warning when some row's intervals rest on fewer clusters than a test needs."""
    counts = sorted({row.clusters for row in comparison.rows if row.clusters})
    few = [c for c in counts if c < MIN_CLUSTERS_FOR_TEST]
    if not few:
        return []
    return [
        f"{WARNING}the intervals rest on {', '.join(map(str, few))} cluster(s) "
        f"(transcript x compaction point; fewer than {MIN_CLUSTERS_FOR_TEST}): read them as "
        "rough, and run more transcripts, points or seeds before trusting a difference."
    ]
