"""How the comparison reads at a glance: a short name, row order, a shared suffix, clusters.

A sweep's id is its absolute folder; a title, a plot or a folder name wants
only the end of it. Rows put the reference first (what every other row is read
against), then the best overall score. A suffix every label shares (the
transcript source, ``@synthetic``) says nothing per row, so it is stated once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchmark.report.paired import Table
from benchmark.scoring.clusters import row_cluster

_SUFFIX = re.compile(r"^([^@\s]+)(@[^\s(]+)(.*)$")


def short_name(kind: str, source: str) -> str:
    """A sweep folder's last two parts (``<date>_<time>`` for Hydra's default), else the
    source itself; characters unsafe in a file name become ``_``."""
    name = source
    if kind == "sweep" and "/" in name:
        name = "_".join(p for p in name.rstrip("/").split("/")[-2:] if p)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "report"


def common_suffix(labels: Sequence[str]) -> str:
    """The ``@...`` after the run name that every label carries (``""`` when they differ)."""
    found = {m.group(2) if (m := _SUFFIX.match(label)) else None for label in labels}
    if len(found) != 1 or None in found:
        return ""
    return found.pop() or ""


def strip_suffix(label: str, suffix: str) -> str:
    """``label`` without ``suffix`` right after its run name."""
    if not suffix:
        return label
    m = _SUFFIX.match(label)
    return f"{m.group(1)}{m.group(3)}" if m and m.group(2) == suffix else label


def order(
    overall: dict[str, float | None], policies: dict[str, str | None], reference: str | None
) -> list[str]:
    """Run ids: the reference policy's runs first, then by overall score, best first
    (runs without one last); Python's stable sort keeps ties in their given order."""

    def key(rid: str) -> tuple[bool, bool, float]:
        value = overall[rid]
        return (policies[rid] != reference, value is None, -(value or 0.0))

    return sorted(overall, key=key)


def clusters(table: Table, cluster_by: str = "point") -> int:
    """Distinct clusters (``stats.cluster_by``: (transcript, compaction point) by default) of
    a run's scored probes."""
    return len({row_cluster(r, cluster_by) for r in table if r.get("score") is not None})
