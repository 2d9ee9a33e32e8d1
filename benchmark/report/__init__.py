"""Compare benchmark runs: ``python -m benchmark.report [SWEEP_OR_EXPERIMENT]``.

``load`` reads runs from MLflow, ``compare`` builds the table and paired
differences, ``plots`` draws the figures, ``render`` writes Markdown and HTML,
``build`` ties them together and logs the files back to MLflow.
"""

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
