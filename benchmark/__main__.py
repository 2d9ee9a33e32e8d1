"""Entry point: ``python -m benchmark [group=option ...] [key=value ...]``.

Hydra composes ``conf/``; ``benchmark.config.schema`` validates it; ``benchmark.run.job.job`` runs
the job (or, with ``+audit=judge``, ``benchmark.audit.run.audit`` audits the judge) and
returns one run record; ``benchmark.tracking.log_run`` logs it to MLflow.
User errors (bad option, bad value, malformed transcript) end in one line on
stderr and exit code 2, never a traceback. A sweep (``-m``) validates every job's config
before the first runs (``benchmark.config.sweep_check``); a job's later user error fails that
job; Hydra reports it after the batch as the job's overrides plus the same one line, and
exits 1. Ctrl-C, SIGTERM or SIGHUP end the job (and a sweep) in one line with exit code
128 + the signal (130, 143, 129), its run logged as KILLED with the probes finished so
far (``benchmark.run.interrupt``).
"""

from __future__ import annotations

from benchmark.run import interrupt

if __name__ == "__main__":  # a signal while the modules below load: one line, not a traceback
    interrupt.on_startup()

import logging  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import TYPE_CHECKING, NoReturn  # noqa: E402

import hydra  # noqa: E402
from hydra.errors import CompactHydraException, HydraException  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from benchmark.config.cli_checks import CONF_DIR  # noqa: E402
from benchmark.errors import JobFailed, UserError, one_line, print_error  # noqa: E402

if TYPE_CHECKING:
    from benchmark.config.schema import BenchmarkConfig
    from benchmark.run.run_record import RunRecord
    from benchmark.tracking.in_process import InProcessRun
    from benchmark.tracking.logger_process import TrackingChild
    from benchmark.tracking.sweep import SweepInfo

log = logging.getLogger("benchmark")


# An absolute path: the same conf/ whether run as a script, with -m, or called in-process.
@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    from benchmark.config.sweep_check import mark_started

    mark_started()
    try:
        return _refusing_writes(run, cfg)
    except KeyboardInterrupt as exc:  # Hydra passes it through: no Hydra frame reports it
        # Not an exception Hydra stores per job either: a sweep stops here, in one line.
        _interrupted(exc)
    except UserError as exc:
        if _in_sweep():
            # Not sys.exit: in a joblib worker or a submitit job that is a crash, not a
            # failed job. Hydra prints a compact exception as its message, no traceback.
            raise CompactHydraException(f"error: {one_line(str(exc))}") from None
        print_error(exc)
        sys.exit(2)
    except JobFailed as exc:
        print_error(exc)
        if not _in_sweep():  # in a sweep the other jobs go on; this one is logged
            sys.exit(1)
        return None


def _refusing_writes(step: Callable[[DictConfig], float | None], cfg: DictConfig) -> float | None:
    """``step(cfg)``, a write the disk refused under a configured folder (a full disk, a
    read-only one) raised as the one-line ``UserError`` naming it (``disk_errors``)."""
    from benchmark.run import disk_errors

    try:
        return step(cfg)
    except UserError:
        raise
    except Exception as exc:
        refused = disk_errors.user_error(exc)
        if refused is None:
            raise
        raise refused from None


def _interrupted(exc: KeyboardInterrupt) -> NoReturn:
    """Print the interrupt's one line (see ``benchmark.run.interrupt``) and exit 128 + signal.
    A run still open in this process is ended KILLED here (MLflow's exit handler would
    end it FINISHED), and the line names it."""
    from benchmark.tracking.run_end import end_active_run

    if isinstance(exc, interrupt.Stopped):
        message = exc.args[0]
        end_active_run("KILLED")
    else:
        message = interrupt.line(None, end_active_run("KILLED"))
    sys.stdout.flush()
    print_error(message)
    interrupt.exiting()
    sys.exit(interrupt.exit_code())


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
    """Validate, run the job or the audit, log its record, report. Returns the objective
    (what a sweeper optimizes)."""
    from benchmark.config import schema as config_mod
    from benchmark.redaction.console import release

    release()  # the job scrubs what it prints (see _main)
    started = int(time.time() * 1000)  # the run's start: its Duration is the job's
    resolved = config_mod.resolve(cfg)
    config = config_mod.validate(resolved)
    from benchmark.tracking import telemetry

    telemetry.apply(config.tracking.telemetry)
    child: TrackingChild | InProcessRun | None = None
    if config.audit is not None:  # +audit=judge: score the judge itself, not a policy
        from benchmark.audit.run import audit

        record, outcome = audit(config, resolved)
    else:
        from benchmark.redaction import scrub_setting
        from benchmark.run.job import job
        from benchmark.tracking.logger_process import TrackingChild, wanted

        # MLflow loads in a child while the job runs (seconds of CPU off the job's path).
        name = scrub_setting(config.run_name)
        if wanted(config.tracking, _in_sweep()):
            child = TrackingChild(config.tracking, started, name)
        elif config.tracking.enabled:  # MLflow in this process: the run is held here
            from benchmark.tracking.in_process import InProcessRun
            from benchmark.tracking.mlflow_run import job_run_name

            sweep = _sweep_info()
            name = job_run_name(name, config.policy.name, config.tracking, sweep)
            child = InProcessRun(config.tracking, started, name, sweep)
        try:
            record, outcome = job(config, resolved, child)
            if outcome.interrupted is None and interrupt.received() is not None:
                raise KeyboardInterrupt  # its raise was lost (a callback that ignores errors)
        except KeyboardInterrupt:
            raise _ended(child, config, "") from None
        except BaseException:
            if interrupt.received() is not None:  # the signal's exception, wrapped by a
                raise _ended(child, config, "") from None  # library (pydantic's serializer)
            if child is not None:  # its run, open since the start, ends now
                child.end("FAILED")
            raise
    try:
        where = _log(record, config, started, child) if config.tracking.enabled else None
        if outcome.interrupted is None and interrupt.received() is not None:
            raise interrupt.Stopped(_killed_after_logging(config, where))
    except KeyboardInterrupt as exc:  # before the logging proper (the store being opened)
        if isinstance(exc, interrupt.Stopped):
            raise
        raise _ended(child, config, " while logging") from None
    except Exception:
        if interrupt.received() is None or outcome.interrupted is not None:
            raise
        raise _ended(child, config, " while logging") from None  # a wrapped signal, as above
    finally:
        if child is not None:
            child.close()
    if outcome.interrupted is not None:
        where = f"run {where}" if where else "nothing was logged (tracking is disabled)"
        raise interrupt.Stopped(interrupt.line(outcome.interrupted, where))
    if outcome.failure is not None:
        raise JobFailed(outcome.failure)
    return outcome.objective


def _ended(
    child: TrackingChild | InProcessRun | None, config: BenchmarkConfig, doing: str
) -> interrupt.Stopped:
    """A signal before the job's record was logged: its run, open since the job's start
    (or opening), is ended KILLED with what it holds; the line says so and where."""
    from benchmark.tracking.logger_process import TrackingChild
    from benchmark.tracking.mlflow_store import store_uri
    from benchmark.tracking.run_end import end_active_run

    run_id = child.end("KILLED") if child is not None else None
    if run_id is not None:
        where = f"run {run_id} logged as KILLED in {store_uri(config.tracking)}"
    elif isinstance(child, TrackingChild) and child.ending:  # still opening the store
        where = f"the run is ended as KILLED in {store_uri(config.tracking)} by process {child.pid}"
    else:  # no child, or it had not opened the run: one opened here is ended here
        where = end_active_run("KILLED") or "nothing was logged"
    return interrupt.Stopped(interrupt.line(None, where, doing))


def _killed_after_logging(config: BenchmarkConfig, where: str | None) -> str:
    """A signal came while the record was logged but its ``KeyboardInterrupt`` was lost
    (raised inside a callback whose errors Python ignores, e.g. an import lock's): the
    run, logged whole, is marked KILLED all the same, as the signal asked."""
    from benchmark.tracking.mlflow_store import store_uri
    from benchmark.tracking.run_end import mark_killed

    if where is None:
        return interrupt.line(None, "nothing was logged (tracking is disabled)")
    run_id = where.split(" ", 1)[0]
    marked = mark_killed(store_uri(config.tracking), run_id)
    said = f"run {run_id} logged as KILLED in {store_uri(config.tracking)}"
    return interrupt.line(None, said if marked else f"run {where}", " while logging")


def _log(
    record: RunRecord,
    config: BenchmarkConfig,
    started: int,
    child: TrackingChild | InProcessRun | None = None,
) -> str:
    """``tracking.log_run`` (in ``child`` when there is one); returns ``<run id> logged as
    <status> in <store>``. A signal while logging ends in one line naming the KILLED run."""
    from benchmark.run.interrupt import LoggingInterrupted, Stopped
    from benchmark.tracking.mlflow_store import store_uri

    try:
        if child is not None:
            run_id = child.log(record, _sweep_info())
        else:
            from benchmark.tracking.mlflow_run import log_run

            run_id = log_run(record, config.tracking, _sweep_info(), start_ms=started)
    except LoggingInterrupted as stop:
        raise Stopped(
            f"error: interrupted ({interrupt.label()}) while logging; run {stop.run_id} logged as "
            f"KILLED in {store_uri(config.tracking)} with what was logged so far"
        ) from None
    except Exception as exc:  # the store refused the run: the job's results stay on disk
        from benchmark.run.job_files import keep_record
        from benchmark.tracking.mlflow_store import refused_write
        from benchmark.tracking.tracking_uri import local_store

        kept = keep_record(record)
        store = local_store(config.tracking)
        refused = exc if isinstance(exc, UserError) else refused_write(exc, store)
        if refused is None:
            raise
        raise UserError(f"{refused}; {kept}") from None
    log.info("MLflow run %s in %s", run_id, store_uri(config.tracking))
    return f"{run_id} logged as {record.status} in {store_uri(config.tracking)}"


def main() -> None:
    from benchmark.tracking import telemetry

    telemetry.apply()  # off before anything loads MLflow (a sweep's callbacks do); see run()
    previous = interrupt.install()
    try:
        _main()
    except KeyboardInterrupt as exc:  # outside a job: composing, a sweep between jobs
        _interrupted(exc)
    except BrokenPipeError:  # stdout's reader left (``--help | head``): end quietly, as a
        _stdout_gone()  # shell tool killed by SIGPIPE would
    finally:
        if interrupt.received() is None:  # an in-process caller gets its handlers back
            interrupt.restore(previous)


def _stdout_gone() -> NoReturn:
    """Output to a pipe whose reader has gone: what was left is dropped (the interpreter's
    last flush too, pointed at /dev/null) and the exit code is 141 (128 + SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os._exit(141) if interrupt.received() is not None else sys.exit(141)


def _main() -> None:
    try:
        from benchmark.config.cli_checks import check_arguments, check_options

        check_arguments(sys.argv[1:])
        check_options(sys.argv[1:])
        check_output_overrides(sys.argv[1:])
    except UserError as exc:
        print_error(exc)
        sys.exit(2)
    from benchmark.redaction.console import scrubbed_output

    # Until a job starts, whatever Hydra prints (--cfg, --info, --help, an argument it
    # echoes back) is scrubbed of secrets on its way out.
    with scrubbed_output(sys.argv[1:]):
        _hydra()


def _hydra() -> None:
    if os.environ.get("HYDRA_FULL_ERROR"):  # the user asked for Hydra's own tracebacks
        hydra_main()
        return
    # Hydra prints a composition error (a misspelled key) in several lines and exits 1.
    # With HYDRA_FULL_ERROR it raises instead, at no cost to a good run, and the error
    # is reported here in one line; any other error is reported as Hydra would.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    from benchmark.config.sweep_check import mark_started

    mark_started(False)
    try:
        hydra_main()
    except Exception as exc:
        _hydra_failed(exc)
    finally:
        os.environ.pop("HYDRA_FULL_ERROR", None)


def _hydra_failed(exc: Exception) -> NoReturn:
    """Report what escaped Hydra in one line: a refused override (exit 2), a refused
    ``hydra.*`` setting (exit 2), a sweep's failed job as Hydra reported it (exit 1);
    anything else is a fault of ours and keeps its traceback."""
    from benchmark.config.checks import override_error
    from benchmark.config.sweep_check import hydra_refused

    if isinstance(exc, OSError):  # Hydra's own writes: its output folder, its saved config
        from benchmark.run import disk_errors

        refused = disk_errors.user_error(exc)
        if refused is not None:
            print_error(refused)
            sys.exit(2)
    message = override_error(exc) if isinstance(exc, HydraException) else None
    if message is not None:
        print_error(message)
        sys.exit(2)
    settings = [a for a in sys.argv[1:] if a.lstrip("+~").startswith(("hydra.", "hydra/"))]
    if settings and hydra_refused(exc):  # before any job: Hydra or a plugin refused it
        said = one_line(str(exc)).partition(", set env var HYDRA_FULL_ERROR")[0]
        print_error(f"Hydra cannot start with {' '.join(settings)}: {type(exc).__name__}: {said}")
        sys.exit(2)
    if not isinstance(exc, CompactHydraException):
        raise
    print_error(str(exc).strip())  # a sweep's failed job, after Hydra's line naming it
    sys.exit(1)


def check_output_overrides(argv: list[str]) -> None:
    """Hydra's output folders given on the command line are writable (Hydra makes them
    unguarded). Only the part before any ``${...}`` is checked."""
    for arg in argv:
        key, _, value = arg.lstrip("+").partition("=")
        if key in ("hydra.run.dir", "hydra.sweep.dir") and value:
            from benchmark.config.checks import check_writable  # pydantic: only when needed

            literal = value.split("${", 1)[0].strip("'\"")
            check_writable(key, literal if literal == value else os.path.dirname(literal) or ".")


def _leave(code: object) -> NoReturn:
    """End the process now, after a signal's line: Python puts the default handlers back
    while it shuts down, so a further signal then would kill it (exit -2, not 130). Runs
    are ended and the line printed already; logs are flushed here."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    try:
        main()
    except SystemExit as exc:
        if interrupt.received() is None:
            raise
        _leave(exc.code)
