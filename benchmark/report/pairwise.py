"""Paired differences between every pair of configs, not only against the reference.

A sweep over several policies asks which of any two keeps more, and separate CIs
cannot say (they ignore that both answered the same probes). Each pair is scored
as the paired differences against the reference are (``paired.py``): per run of
one config, the other config's run asked the same probes; its probes matched by
id and question; runs of one config over seeds pooled; cluster jackknife t.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.report.load import RunData
from benchmark.report.paired import (
    Diffs,
    Paired,
    RowPair,
    Table,
    closest,
    config_key,
    config_name,
    diffs_for,
    fill,
    matched,
    no_pairs_note,
    numbered,
)


def arms(runs: Sequence[RunData], labels: dict[str, str]) -> list[tuple[str, list[RunData]]]:
    """Runs grouped by config (``paired.config_key``), in the order of ``runs``, labelled:
    a config of one run by its run's label; of several, ``<name> (<n> runs)``."""
    groups: dict[tuple, list[RunData]] = {}
    for run in runs:
        groups.setdefault(config_key(run), []).append(run)
    names = [
        labels[members[0].run_id]
        if len(members) == 1
        else f"{config_name(members[0])} ({len(members)} runs)"
        for members in groups.values()
    ]
    return list(zip(numbered(names), groups.values(), strict=True))


def pairwise_differences(
    runs: Sequence[RunData],
    labels: dict[str, str],
    tables: dict[str, Table],
    dims: list[str],
    *,
    probe_type: str | None = None,
    how: Diffs | None = None,
) -> list[Paired]:
    """Every later config minus every earlier one (in the order of ``runs``), grouped by the
    later: ``b - a``, ``c - a``, ``c - b``. Empty with fewer than two configs. ``how``:
    clusters and limits (default: ``paired.diffs_for(runs)``)."""
    how = how or diffs_for(runs)
    grouped = arms(runs, labels)
    out = []
    for j, (label, mine) in enumerate(grouped):
        for other, theirs in grouped[:j]:
            pairs: list[RowPair] = []
            references = []
            for run in mine:
                ref = closest(run, theirs)
                references.append(ref.run_id)
                pairs += matched(tables.get(run.run_id, []), tables.get(ref.run_id, []), probe_type)
            diff = Paired(
                label=label,
                run_ids=[r.run_id for r in mine],
                reference_run_ids=references,
                reference_label=other,
            )
            if pairs:
                out.append(fill(diff, pairs, dims, how))
            else:
                diff.note = no_pairs_note(probe_type)
                out.append(diff)
    return out
