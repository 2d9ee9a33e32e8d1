"""``python -m benchmark.report [SWEEP_OR_EXPERIMENT] [options]``: compare runs.

Without an argument the latest sweep of ``--experiment`` is reported (or, when
no run there belongs to a sweep, the whole experiment). Writes ``report.md``,
``report.html``, two PNGs and ``comparison.json`` to ``--out``, logs them to a
``report:<sweep>`` MLflow run, and prints the table. User errors are one line
on stderr and exit code 2.
"""

from __future__ import annotations

if __name__ == "__main__":  # the command (not an import): a signal while it loads is one line
    from benchmark.run import interrupt as _interrupt

    _interrupt.on_startup()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, NoReturn  # noqa: E402

from benchmark.arg_parser import OneLineParser  # noqa: E402
from benchmark.errors import UserError, print_error  # noqa: E402
from benchmark.probe.models import PROBE_TYPES  # noqa: E402

if TYPE_CHECKING:
    from benchmark.report import Comparison, ReportFiles, Selection

DEFAULT_REFERENCE = "none"  # the control arm: no compaction at all


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m benchmark.report",
        description="Compare benchmark runs of a sweep or an experiment, with 95% CIs.",
    )
    p.add_argument(
        "target",
        nargs="?",
        metavar="SWEEP_OR_EXPERIMENT",
        help="a sweep id (its sweep dir, or the end of it) or an experiment name; "
        "default: the latest sweep",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--store-dir",
        help="local SQLite store (default: $MLFLOW_TRACKING_URI if set, else mlruns)",
    )
    where.add_argument("--tracking-uri", help="any MLflow tracking URI (e.g. a tracking server)")
    p.add_argument(
        "--experiment",
        default="compaction-benchmark",
        help="where to look for sweeps (default: compaction-benchmark)",
    )
    p.add_argument(
        "--reference",
        help=f"policy every run is compared with on paired probes (default: "
        f"{DEFAULT_REFERENCE}, when the runs include it); '-' for none (every two configs "
        "are still compared)",
    )
    p.add_argument("--probe-type", choices=PROBE_TYPES, help="pair only probes of this type")
    p.add_argument(
        "--out", type=Path, help="output folder (default: reports/<sweep or experiment>)"
    )
    p.add_argument("--no-log", action="store_true", help="write the files only, no MLflow run")
    p.add_argument(
        "--ui-url",
        help="address of the MLflow UI (e.g. http://127.0.0.1:5000 for `mlflow ui`): run ids "
        "link to it and the logged report.md shows its plots from it (default: the tracking "
        "URI when it is a server)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """The report, or one line and 128 + n when a signal stops it: SIGTERM, SIGHUP or
    Ctrl-C (a report run being logged is ended KILLED, not left RUNNING or FINISHED)."""
    from benchmark.run import interrupt

    previous = interrupt.install()
    try:
        return _report(argv)
    except KeyboardInterrupt:
        from benchmark.tracking.run_end import end_active_run

        sys.stdout.flush()
        print_error(interrupt.line(None, end_active_run("KILLED") or "no report was logged"))
        interrupt.exiting()
        return interrupt.exit_code()
    finally:
        if interrupt.received() is None:  # an in-process caller gets its handlers back
            interrupt.restore(previous)


def _report(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    from benchmark.tracking import telemetry

    telemetry.apply()  # no usage events unless MLFLOW_DISABLE_TELEMETRY=false asks for them
    # MLflow draws a progress bar per downloaded artifact; one per run is noise here.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from benchmark.report import build_report, client_for, select

    try:
        client = client_for(args.tracking_uri, args.store_dir)
        from mlflow.exceptions import MlflowException  # after the store check: a slow import
    except UserError as exc:
        print_error(exc)
        return 2
    try:
        selection = select(client, args.target, args.experiment)
        comparison, files = build_report(
            client,
            selection,
            args.out,
            reference=_reference(args.reference, selection),
            probe_type=args.probe_type,
            log=not args.no_log,
            ui_url=args.ui_url or _ui_url(args.tracking_uri, args.store_dir),
        )
    except UserError as exc:
        print_error(exc)
        return 2
    except MlflowException as exc:
        print_error(f"MLflow: {(str(exc).strip().splitlines() or ['error'])[0]}")
        return 2
    _print(comparison, files)
    return 0


def _ui_url(tracking_uri: str | None, store_dir: str | None) -> str | None:
    """The tracking server's address, whose UI shows the runs; None for a local store."""
    if store_dir is not None:
        return None
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or ""
    return uri if uri.startswith(("http://", "https://")) else None


def _reference(given: str | None, selection: Selection) -> str | None:
    """An explicit reference must exist (compare says so); the default is used if present."""
    if given is not None:
        return None if given == "-" else given
    if any(run.policy == DEFAULT_REFERENCE for run in selection.runs):
        return DEFAULT_REFERENCE
    print(
        f"note: no '{DEFAULT_REFERENCE}' run here, so no paired differences against a "
        "reference (choose a reference policy with --reference)",
        file=sys.stderr,
    )
    return None


def _print(comparison: Comparison, files: ReportFiles) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    from benchmark.report.cells import tables
    from benchmark.report.notes import top_warnings
    from benchmark.report.render import markdown_table

    console = Console()
    for line in comparison.header:  # what produced the numbers, as the files open
        print(f"{line.name}: {line.value}")
    for note in top_warnings(comparison):
        print(note)
    print()
    sections = tables(comparison)
    if comparison.task is not None:
        from benchmark.report.task_section import HEADING
        from benchmark.report.task_section import tables as task_tables

        sections += [(f"{HEADING}: {c}", table) for c, table in task_tables(comparison.task)]
    for i, (heading, table) in enumerate(sections):
        text = markdown_table(*table)
        if console.is_terminal:
            if i:
                console.print(f"\n{heading}:")
            console.print(Markdown(text))
        else:  # pipes and logs: the Markdown itself, never wrapped or elided
            print(f"\n{heading}:" if i else "", text, sep="\n" if i else "")
    if comparison.task is not None:  # what the task tables mean, in words
        from benchmark.report.task_section import lines

        print("", *lines(comparison.task), sep="\n")
    print()
    paths = (files.markdown, files.html, files.pareto, files.dimensions, files.comparison)
    for path in (*paths, *([files.task] if files.task else [])):
        print(path)
    if files.run_id:
        print(f"MLflow run {files.run_id} (report:{comparison.source})")


def _leave(code: int) -> NoReturn:
    """End the process now, after a signal's line: Python puts the default handlers back
    while it shuts down (MLflow's exit handlers take a while), so a further signal then
    killed it (exit -2, not 130). The report run is ended and the line printed already."""
    logging.shutdown()
    with contextlib.suppress(Exception):  # a closed pipe: the exit code still tells
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    code = main()
    _interrupt.exiting()  # a signal while MLflow's exit handlers run: 128 + n, not killed
    if _interrupt.received() is not None:
        _leave(code)
    sys.exit(code)
