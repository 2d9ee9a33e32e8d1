"""What a transcript file holds, before a job runs on it:
``python -m benchmark.preview <path>... [--format F] [--probes] [--review N [--seed S]]
[--json] [key=value ...]``.

Each file is imported as a job would import it, and shown with the compaction
points and probes the job's own config would find: trailing ``key=value``
arguments are Hydra overrides of ``conf/`` (``compaction.context_window=8000``),
so what is shown here is what ``python -m benchmark transcript=files ...``
with the same overrides would evaluate. Probes always come from the offline
extractor: an LLM writer would need the network and cost tokens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import get_args

from rich.console import Console
from rich.markup import escape

from benchmark.arg_parser import OneLineParser
from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError, print_error
from benchmark.preview.render import render, render_review
from benchmark.preview.report import preview_file, review_sample
from benchmark.transcript.config import ImportFormat
from benchmark.transcript.scan import expand_found

__all__ = ["preview_file", "load_config", "main", "render"]


def load_config(paths: list[str], overrides: list[str]) -> BenchmarkConfig:
    """The validated config a job on ``paths`` with ``overrides`` would use."""
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from benchmark.config.cli_checks import CONF_DIR, check_options
    from benchmark.config.schema import validate

    parser = OverridesParser.create()
    for override in overrides:
        try:
            parser.parse_override(override)
        except HydraException as exc:
            raise UserError(f"bad override {override!r}: {_first_line(exc)}") from None
    check_options(overrides)
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=["transcript=files", *overrides])
        if cfg.transcript.get("kind") != "files":
            raise UserError("preview reads the files it is given; drop the transcript= override")
        cfg.transcript.path = paths  # set here: Hydra's grammar would mangle globs and commas
    except (HydraException, OmegaConfBaseException) as exc:
        raise UserError(_first_line(exc)) from None
    return validate(cfg, parts=False)


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if len(lines) > 1 and lines[1].startswith("To append"):  # Hydra's hint for a new key
        return f"{lines[0]} ({lines[1]})"
    return lines[0] if lines else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m benchmark.preview",
        description="Show what transcript files hold and the compaction points and probes "
        "a job with the same config overrides would find.",
        epilog="example: python -m benchmark.preview '~/sessions/*.jsonl' "
        "compaction.context_window=32000 probe.per_type=4 --probes",
    )
    parser.add_argument(
        "args", nargs="+", metavar="PATH|key=value", help="files, globs or folders; overrides"
    )
    parser.add_argument(
        "--format",
        choices=get_args(ImportFormat),
        help="import format (default: transcript.format of the config, auto)",
    )
    parser.add_argument("--probes", action="store_true", help="list every probe with its gold")
    parser.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    parser.add_argument(
        "--review",
        type=int,
        metavar="N",
        help="print N random probes across the files' points with their evidence, to judge",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the --review sample")
    try:
        args = parser.parse_intermixed_args(argv)
    except SystemExit as exc:  # a usage error (printed, one line) or --help
        return int(exc.code or 0)
    overrides = [a for a in args.args if "=" in a and not Path(a).expanduser().exists()]
    paths = [a for a in args.args if a not in overrides]
    if not paths:
        print("error: give at least one file, glob or folder", file=sys.stderr)
        return 2
    try:
        config = load_config(paths, overrides)
        files = expand_found(paths, config.transcript.extensions)  # type: ignore[union-attr]
    except UserError as exc:
        print_error(str(exc).removeprefix("transcript.path: "))
        return 2
    fmt = args.format or config.transcript.format  # type: ignore[union-attr]
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160)  # pipes: no wrapped or elided columns
    if config.probe.writer is not None and not args.json:
        console.print(
            "probe.writer is an LLM writer; probes shown are the offline extractor's (no network)"
        )
    if args.review is not None and args.review < 1:
        print("error: --review needs a positive number of probes", file=sys.stderr)
        return 2
    reports = []
    for path, named in files.items():
        report = preview_file(path, fmt, config, args.probes or args.review is not None, named)
        reports.append(report)
        if "error" in report:
            print_error(report["error"])
        elif "skipped" in report:
            if not args.json and args.review is None:
                console.print(f"skipped {escape(report['path'])}: {report['skipped']}")
        elif not args.json and args.review is None:
            render(report, console, args.probes)
    if args.review is not None:
        sample = review_sample(reports, args.review, args.seed)
        if args.json:
            print(json.dumps(sample, indent=2, ensure_ascii=False))
        else:
            render_review(sample, console)
        return 1 if any("error" in r for r in reports) else 0
    failed = sum("error" in r for r in reports)
    skipped = sum("skipped" in r for r in reports)
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
    elif len(reports) > 1:
        left_out = f", {skipped} skipped (sub-agent logs, side files)" if skipped else ""
        console.print(f"{len(reports)} files, {failed} could not be imported{left_out}")
    return 1 if failed else 0
