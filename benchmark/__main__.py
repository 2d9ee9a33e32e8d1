"""Entry point: ``python -m benchmark [group=option ...] [key=value ...]``.

Hydra composes ``conf/``; ``benchmark.config`` validates it; ``benchmark.pipeline``
runs the job; ``benchmark.tracking`` logs it to MLflow; the scorecard is printed.
With ``+audit=judge`` the job audits the judge instead (``benchmark.audit``).
User errors (bad option, bad value, malformed transcript) end in one line on
stderr and exit code 2, never a traceback. In a sweep (``-m``) a job's user error
fails that job; Hydra reports it after the batch as the job's overrides plus the
same one line, and exits 1. Ctrl-C ends the job (and a sweep) in one line with exit
code 130, its run logged as KILLED with the probes finished so far (``benchmark.interrupt``).
"""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import hydra
from hydra.errors import CompactHydraException, HydraException
from omegaconf import DictConfig

from benchmark.errors import JobFailed, UserError

if TYPE_CHECKING:
    from benchmark.config import BenchmarkConfig
    from benchmark.parts import Parts
    from benchmark.results import JobResult
    from benchmark.tracking.sweep import SweepInfo

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
log = logging.getLogger("benchmark")


# An absolute path: the same conf/ whether run as a script, with -m, or called in-process.
@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    try:
        return run(cfg)
    except KeyboardInterrupt as exc:  # Hydra passes it through: no Hydra frame reports it
        # Not an exception Hydra stores per job either: a sweep stops here, in one line.
        _interrupted(exc)
    except UserError as exc:
        if _in_sweep():
            # Not sys.exit: in a joblib worker or a submitit job that is a crash, not a
            # failed job. Hydra prints a compact exception as its message, no traceback.
            raise CompactHydraException(f"error: {exc}") from None
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except JobFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        if not _in_sweep():  # in a sweep the other jobs go on; this one is logged
            sys.exit(1)
        return None


def _interrupted(exc: KeyboardInterrupt) -> NoReturn:
    """Print the interrupt's one line (see ``benchmark.interrupt``) and exit 130."""
    from benchmark import interrupt

    message = exc.args[0] if isinstance(exc, interrupt.Stopped) else interrupt.line()
    sys.stdout.flush()
    print(message, file=sys.stderr, flush=True)
    interrupt.exiting()
    sys.exit(interrupt.EXIT_CODE)


def _in_sweep() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _sweep_info() -> SweepInfo | None:
    """This job's place in a Hydra multirun, as plain data for the tracking layer."""
    from hydra.core.hydra_config import HydraConfig

    if not _in_sweep():
        return None
    from benchmark.tracking.sweep import sweep_info

    hydra_cfg = HydraConfig.get()
    return sweep_info(
        str(hydra_cfg.sweep.dir),
        [str(o) for o in hydra_cfg.overrides.task],
        int(hydra_cfg.job.num),
    )


def run(cfg: DictConfig) -> float | None:
    """Validate, run, log, print. Returns the configured objective (what a sweeper optimizes)."""
    from benchmark import config as config_mod
    from benchmark import scorecard
    from benchmark.llm.preflight import preflight
    from benchmark.parts import build_parts

    resolved = config_mod.resolve(cfg)
    config = config_mod.validate(resolved)
    if config.audit is not None:  # +audit=judge: score the judge itself, not a policy
        from benchmark.audit.run import main as run_audit

        return run_audit(config, resolved, sweep=_sweep_info())
    parts = build_parts(config)  # a missing key or bad option fails here, before any work
    preflight(parts)  # so does an unreachable endpoint or a misnamed model (one line)
    if config.tracking.enabled:
        from benchmark.tracking.mlflow_store import prepare_tracking

        # Migrate a fresh store (or reach the server) before the work, not after it.
        prepare_tracking(config.tracking)
    result = _run_job(config, resolved, parts)
    card = scorecard.render(result)
    metrics = result.metrics()
    if config.tracking.enabled:
        from benchmark.interrupt import LoggingInterrupted, Stopped
        from benchmark.tracking.mlflow_store import store_uri

        try:
            run_id = log_result(config, resolved, result, card)
        except LoggingInterrupted as stop:
            raise Stopped(
                f"error: interrupted (Ctrl-C) while logging; run {stop.run_id} logged as "
                f"KILLED in {store_uri(config.tracking)} with what was logged so far"
            ) from None
        log.info("MLflow run %s in %s", run_id, store_uri(config.tracking))
    check_failures(result.failed_fraction, config.execution.fail_on_error, result.failure_cause())
    return objective_value(metrics, config.objective)


def _run_job(config: BenchmarkConfig, resolved: dict[str, Any], parts: Parts) -> JobResult:
    """``run_job``; on Ctrl-C, what was done is logged as a KILLED run and the interrupt
    goes on as ``Stopped`` with its one line."""
    from benchmark import interrupt
    from benchmark.pipeline import run_job

    try:
        return run_job(config, parts)
    except interrupt.JobInterrupted as stop:
        partial = stop.result
    where = "nothing was logged (tracking is disabled)"
    if config.tracking.enabled:
        from rich.console import Console

        from benchmark.scorecard import render
        from benchmark.tracking.mlflow_store import store_uri

        quiet = Console(file=io.StringIO(), width=160)  # the partial table goes to the run only
        card = "INTERRUPTED (Ctrl-C): the probes finished before it\n" + render(partial, quiet)
        run_id = log_result(config, resolved, partial, card)
        where = f"run {run_id} logged as KILLED in {store_uri(config.tracking)}"
    raise interrupt.Stopped(interrupt.line(partial, where)) from None


def log_result(
    config: BenchmarkConfig, resolved: dict[str, Any], result: JobResult, card: str
) -> str:
    """Log ``result`` as one MLflow run (KILLED when it was interrupted); returns its id."""
    from benchmark.tracking.mlflow_store import log_job

    metrics = result.metrics()
    objectives = {"score_per_kilotoken": score_per_kilotoken(metrics)}
    return log_job(
        config,
        resolved,
        result,
        card,
        sweep=_sweep_info(),
        extra_metrics={k: v for k, v in objectives.items() if v is not None},
    )


def score_per_kilotoken(metrics: Mapping[str, float]) -> float | None:
    """The overall score per thousand kept tokens: ``overall / (tokens/after / points / 1000)``.

    The denominator is the mean compacted context per compaction point (in thousands of
    tokens), so the value does not grow with the number of points a session has. It
    rewards a policy that keeps a small context without losing the score; like the
    overall it needs judged probes (None when none was).
    """
    overall, after, points = (metrics.get(k) for k in ("overall", "tokens/after", "points"))
    points = (points or 0) - metrics.get("points/compaction_failed", 0)  # no tokens counted
    if overall is None or not after or not points:
        return None
    return overall / (after / points / 1000)


def objective_value(metrics: Mapping[str, float], objective: str) -> float | None:
    """What the job returns to a sweeper: ``overall`` (0..scale_max) or ``score_per_kilotoken``."""
    if objective == "score_per_kilotoken":
        return score_per_kilotoken(metrics)
    return metrics.get("overall")


def check_failures(fraction: float, allowed: float, cause: str | None = None) -> None:
    """Fail the job (after everything is logged) when too many probes have no score;
    ``cause`` (the most common error) says why, e.g. which endpoint was unreachable."""
    if fraction > allowed:
        raise JobFailed(
            f"{fraction:.1%} of probes failed after all retries, more than "
            f"execution.fail_on_error={allowed:g}"
            + (f" (most common error: {cause})" if cause else "")
            + "; results are logged, failures are in judgments.jsonl (error field)"
        )


def check_options(argv: list[str]) -> None:
    """Reject an unknown config-group option in one line, before Hydra lists a page of them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        overrides = OverridesParser.create().parse_overrides(
            [a for a in argv if "=" in a and not a.startswith("-")]
        )
    except HydraException:
        return  # Hydra reports syntax errors itself
    for override in overrides:
        group = override.key_or_group
        folder = CONF_DIR / group
        # hydra/... options (launchers, sweepers) come from plugins, not only from conf/.
        if override.is_delete() or group.startswith("hydra/") or not folder.is_dir():
            continue
        try:
            values = (
                list(override.sweep_string_iterator())
                if override.is_sweep_override()
                else [override.get_value_element_as_str()]
            )
        except HydraException:
            continue  # glob() sweeps need Hydra's config loader
        options = sorted(p.stem for p in folder.glob("*.yaml"))
        for value in values:
            if value not in options:
                raise UserError(f"unknown {group} '{value}' (choose from: {', '.join(options)})")


def main() -> None:
    try:
        _main()
    except KeyboardInterrupt as exc:  # outside a job: composing, a sweep between jobs
        _interrupted(exc)


def _main() -> None:
    try:
        check_options(sys.argv[1:])
        check_output_overrides(sys.argv[1:])
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    if os.environ.get("HYDRA_FULL_ERROR"):  # the user asked for Hydra's own tracebacks
        hydra_main()
        return
    # Hydra prints a composition error (a misspelled key) in several lines and exits 1.
    # With HYDRA_FULL_ERROR it raises instead, at no cost to a good run, and the error
    # is reported here in one line; any other error is reported as Hydra would.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        hydra_main()
    except HydraException as exc:
        from benchmark.config_checks import override_error

        message = override_error(exc)
        if message is None:
            if not isinstance(exc, CompactHydraException):
                raise
            print(str(exc).strip(), file=sys.stderr)  # e.g. a sweep's failed job, reported
            sys.exit(1)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)
    finally:
        os.environ.pop("HYDRA_FULL_ERROR", None)


def check_output_overrides(argv: list[str]) -> None:
    """Hydra's output folders given on the command line are writable (Hydra makes them
    unguarded). Only the part before any ``${...}`` is checked."""
    for arg in argv:
        key, _, value = arg.lstrip("+").partition("=")
        if key in ("hydra.run.dir", "hydra.sweep.dir") and value:
            from benchmark.config_checks import check_writable  # pydantic: only when needed

            literal = value.split("${", 1)[0].strip("'\"")
            check_writable(key, literal if literal == value else os.path.dirname(literal) or ".")


if __name__ == "__main__":
    main()
