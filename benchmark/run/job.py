"""The benchmark job as ``__main__`` runs it: build, run, print, and return its run record.

The parts are built (and their endpoints reached) before any work; the stages run in
``benchmark.run.pipeline.run_job``; the scorecard is printed; the result becomes one
:class:`~benchmark.run.run_record.RunRecord` for ``benchmark.tracking.log_run``. Ctrl-C
during the stages gives a KILLED record of the probes finished before it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console

from benchmark.config.schema import BenchmarkConfig
from benchmark.llm import client_loaded
from benchmark.redaction import scrub_setting
from benchmark.run import interrupt
from benchmark.run.job_files import RunFiles, job_files, judgment_row, judgments_table, run_folder
from benchmark.run.parts import Parts, build_parts
from benchmark.run.pipeline import run_job
from benchmark.run.results import JobResult, PointResult
from benchmark.run.run_record import Outcome, RunRecord, columns, redact, run_params
from benchmark.scoring import metric_names as names
from benchmark.scoring import scorecard
from benchmark.tracking.inputs import manifest_metrics

if TYPE_CHECKING:
    from benchmark.tracking.in_process import InProcessRun
    from benchmark.tracking.logger_process import TrackingChild


def job(
    config: BenchmarkConfig,
    resolved: dict[str, Any],
    child: TrackingChild | InProcessRun | None = None,
) -> tuple[RunRecord, Outcome]:
    """Run the configured job; its record, and the objective or why it stops. ``child``:
    what opens the job's run once its parts are built, the process beside the job or
    this one (None: the store is prepared here and the run made when logged)."""
    parts = build_parts(config)  # a missing key or bad option fails here, before any work
    llm = client_loaded()  # no part made an LLM client: nothing to reach, no aiohttp to load
    if llm:
        from benchmark.llm.preflight import preflight

        preflight(parts)  # so does an unreachable endpoint or a misnamed model (one line)
    before_calls = store_ready = None
    if child is not None:
        child.prepare()  # the store is opened beside the job, as it would be here
        # LLM calls cost money: never make them for a store that cannot take them. The
        # store opens while the points are prepared; preparing that calls an LLM (a probe
        # writer, a summarizer, a task arm) waits for it first. Offline, the work takes
        # seconds: the store is checked when the run is logged.
        if llm and (config.task is not None or _prepares_with_llm(parts)):
            child.ready()
        elif llm:
            before_calls = child.ready
            store_ready = child.ready_now
    elif config.tracking.enabled:
        from benchmark.tracking.mlflow_store import prepare_tracking

        # Migrate a fresh store (or reach the server) before the work, not after it.
        prepare_tracking(config.tracking)
    arm = None
    if config.task is not None:  # task success: tau2 sessions in, resumes at the same points
        from benchmark.task_success.arm import TaskArm

        arm = TaskArm(config, parts)
    folder, temporary = run_folder()
    files = RunFiles(folder, config.policy.name)  # contexts and replies: files, point by point
    try:
        job_config = arm.prepare() if arm is not None else config
        sink = _sink(config, child, files, parts)
        sink = arm.sink(sink) if arm else sink
        result = run_job(job_config, parts, sink, before_calls, store_ready)
        task = arm.outcome(_resumed(arm, result)) if arm is not None else None
    except interrupt.JobInterrupted as stop:
        partial = stop.result
        quiet = Console(file=io.StringIO(), width=160)  # the partial table goes to the run only
        card = f"INTERRUPTED ({interrupt.label()}): the probes finished before it\n"
        card += scorecard.render(partial, quiet)
        record = job_record(config, resolved, partial, card, files)
        return record.keeping(temporary), Outcome(interrupted=partial)
    finally:
        files.close()
        if arm is not None:
            arm.close()
    card = scorecard.render(result)
    if task is not None:
        print(task.line)
        card += "\n" + task.line
    outcome = Outcome(
        objective=objective_value(result.metrics(), config.objective),
        failure=failure(result.failed_fraction, config.execution.fail_on_error, result),
    )
    record = job_record(config, resolved, result, card, files)
    if task is not None:  # the arm's metrics and per-point table (benchmark/task_success/report.py)
        import json

        from benchmark.task_success.report import TABLE

        record.metrics.update(task.metrics)
        record.artifacts[TABLE] = json.dumps(task.rows, indent=1)
    return record.keeping(temporary), outcome


def _sink(
    config: BenchmarkConfig,
    child: TrackingChild | InProcessRun | None,
    files: RunFiles,
    parts: Parts,
) -> Any:
    """Where each finished point goes: its files; with a tracking child and probe traces,
    its traces to the child too, written while the job goes on (``trace_stream``)."""
    if child is None or not config.tracking.trace_probes or not hasattr(child, "stream"):
        return files.point
    from benchmark.tracking.trace_stream import TraceStream

    source = "LLM_JUDGE" if _llm_judged(config) else "CODE"
    return TraceStream(child, files, parts.ledger, config.judge.name, source)


def _prepares_with_llm(parts: Parts) -> bool:
    """Whether preparing the points can call an LLM: a client under the policy (its
    summarizer) or the probe writer."""
    from benchmark.llm.preflight import llm_clients

    return bool(llm_clients(parts.policy, parts.writer))


def _resumed(arm: Any, result: JobResult) -> list[Any]:
    """The arm's resumes; Ctrl-C during them keeps the probes' result (KILLED)."""
    try:
        return arm.run()
    except KeyboardInterrupt:
        from benchmark.llm.loop import cancel_all

        cancel_all()
        raise interrupt.JobInterrupted(result.model_copy(update={"interrupted": True})) from None


def job_record(
    config: BenchmarkConfig,
    resolved: dict[str, Any],
    result: JobResult,
    card: str,
    files: RunFiles | None = None,
) -> RunRecord:
    """The job's run: the config's result-changing keys as params (all of it in
    config.yaml), scores as metrics, the rest as artifacts (KILLED when ``result`` was
    interrupted); ``files``: the folder streamed as it ran."""
    clean = redact(resolved)
    metrics = result.metrics()
    objectives = {names.SCORE_PER_KILOTOKEN: score_per_kilotoken(metrics)}
    texts = job_files(result, clean)
    judgments = (  # without files, ``result`` kept its points whole
        files.judgment_rows
        if files is not None
        else [judgment_row(r, result.policy, "") for r in result.probe_results]
    )
    if card:
        texts["scorecard.txt"] = card
    return RunRecord(
        run_name=scrub_setting(config.run_name),
        params=run_params(clean),
        tags={
            "policy": config.policy.name,
            "transcript": config.transcript.name,
            "judge": config.judge.name,
            "answerer": config.answerer.name,
            "rubric": config.rubric.name,
            **({"not_measured": ",".join(result.not_measured)} if result.not_measured else {}),
            **({"interrupted": "true"} if result.interrupted else {}),
        },
        metrics={
            **metrics,
            **(manifest_metrics(result.inputs) if result.inputs else {}),
            **{k: v for k, v in objectives.items() if v is not None},
        },
        tables={
            "results_table.json": columns(result.rows()),
            names.POINTS_TABLE: columns([point_row(point) for point in result.points]),
            "judgments_table.json": judgments_table(judgments),
        },
        artifacts=texts,
        artifact_dir=files.folder if files is not None else None,
        inputs=result.inputs,
        calls=result.calls,
        judge_source="LLM_JUDGE" if _llm_judged(config) else "CODE",
        status="KILLED" if result.interrupted else "FINISHED",
    )


def _llm_judged(config: BenchmarkConfig) -> bool:
    """An LLM judge (one with an endpoint) or a panel (LLM members, maybe the reference)."""
    return any(key in config.judge.kwargs for key in ("endpoint", "members"))


def point_row(point: PointResult) -> dict[str, object]:
    """One compaction point's row of ``names.POINTS_TABLE``: a table, since points of
    different sessions are no steps of one line. A failed point kept no tokens to show."""
    failed = point.compaction_error is not None
    return {
        "transcript": point.point.transcript_id,
        "point": point.point.ordinal,
        "tokens_before": point.point.tokens_before,
        "tokens_after": None if failed else point.tokens_after,
        "compression_ratio": None if failed else point.compression_ratio,
        "over_window": point.over_window,
        "error": point.compaction_error or point.probe_writer_error,
    }


def score_per_kilotoken(metrics: Mapping[str, float]) -> float | None:
    """The overall score per thousand kept tokens: ``overall / (tokens/after / points/total
    / 1000)`` (points counted where compaction did not fail).

    The denominator is the mean compacted context per compaction point (in thousands of
    tokens), so the value does not grow with the number of points a session has. It
    rewards a policy that keeps a small context without losing the score; like the
    overall it needs judged probes (None when none was).
    """
    overall, after, points = (
        metrics.get(k) for k in (names.OVERALL, names.TOKENS_AFTER, names.POINTS_TOTAL)
    )
    points = (points or 0) - metrics.get(names.POINTS_COMPACTION_FAILED, 0)  # no tokens counted
    if overall is None or not after or not points:
        return None
    return overall / (after / points / 1000)


def objective_value(metrics: Mapping[str, float], objective: str) -> float | None:
    """What the job returns to a sweeper: the option ``overall`` (0..scale_max) or
    ``score_per_kilotoken``, read from their metrics (``names.OVERALL``)."""
    if objective == "score_per_kilotoken":
        return score_per_kilotoken(metrics)
    return metrics.get(names.OVERALL)


def failure(fraction: float, allowed: float, result: JobResult) -> str | None:
    """Why the job fails (after everything is logged) when too many probes have no score;
    the most common error says why, e.g. which endpoint was unreachable."""
    if fraction <= allowed:
        return None
    cause = result.failure_cause()
    return (
        f"{fraction:.1%} of probes failed after all retries, more than "
        f"execution.fail_on_error={allowed:g}"
        + (f" (most common error: {cause})" if cause else "")
        + "; results are logged, failures are in judgments.jsonl (error field)"
    )
