"""Compare benchmark runs: ``python -m benchmark.report [SWEEP_OR_EXPERIMENT]``.

``load`` reads runs from MLflow, ``compare`` builds the table and paired
differences, ``plots`` draws the figures, ``render`` writes Markdown and HTML,
``build`` ties them together and logs the files back to MLflow.

The names below are imported on first use (:mod:`benchmark.lazy`): ``python -m
benchmark.report`` runs this file before its ``__main__``, which installs its signal
handlers first thing; imported eagerly, these modules kept a signal in the command's
first ~0.3 s from being handled (SIGTERM killed it silently).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmark.lazy import exports

if TYPE_CHECKING:
    from benchmark.report.build import ReportFiles, build_report
    from benchmark.report.compare import Comparison, compare
    from benchmark.report.load import Selection, client_for, select

__all__ = [
    "Comparison",
    "ReportFiles",
    "Selection",
    "build_report",
    "client_for",
    "compare",
    "select",
]

_WHERE = {
    "ReportFiles": ".build",
    "build_report": ".build",
    "Comparison": ".compare",
    "compare": ".compare",
    "Selection": ".load",
    "client_for": ".load",
    "select": ".load",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
