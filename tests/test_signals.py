"""Signals at every stage of a real job: SIGINT, a second SIGINT, SIGTERM, SIGHUP, SIGKILL.

Each case is a real ``python -m benchmark`` subprocess on a real SQLite store, signalled
once the stage it names is seen (a log line, a file, a request at the loopback stub), and
then: exit 128 + signal, exactly one ``error:`` line, no traceback, the job's run KILLED
or absent (never RUNNING, never an empty FINISHED one), and the store still opens. The
jobs of the module run a few at a time in one fixture (pytest-xdist sends a whole file to
one worker); each test asserts its own case.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import SMALL, run_benchmark, start_benchmark
from openai_stub import OpenAIStub, scripted_reply

EXPERIMENT = "compaction-benchmark"
LIMIT_S = 60  # no case may take longer, signals included
GAP_S = 0.25  # between a first and a second signal: the job is handling the first
INT, TERM, HUP, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL
OFFLINE = [o for o in SMALL if o not in ("tracking=disabled",)] + ["execution.progress=log"]


class Job:
    """A running job whose stdout and stderr lines are collected as they come."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = start_benchmark(args, cwd, env)
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [
            threading.Thread(target=self._pump, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _pump(pipe, lines: list[str]) -> None:
        for line in pipe:
            lines.append(line.rstrip("\n"))

    def saw(self, text: str) -> int:
        return sum(text in line for line in [*self.out, *self.err])

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + LIMIT_S
        while not condition():
            if self.proc.poll() is not None:
                raise AssertionError(f"the job ended before {what}: {self.err[-20:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.02)

    def finish(self) -> int:
        try:
            return self.proc.wait(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no end after the signal: {self.err[-20:]}") from None
        finally:
            for reader in self.readers:  # a tracking child may hold stderr a little longer
                reader.join(timeout=LIMIT_S)


@dataclass
class Stage:
    """A job's overrides and how to tell it has reached the stage (``arrive``)."""

    args: Callable[[Path, OpenAIStub | None], list[str]]
    arrive: Callable[[Job, Path, OpenAIStub | None], None]
    fresh_store: bool = False  # the job creates and migrates the store itself
    llm: bool = False


def _offline(*more: str) -> Callable[[Path, OpenAIStub | None], list[str]]:
    return lambda tmp, stub: [*OFFLINE, f"tracking.store_dir={tmp / 'mlruns'}", *more]


def _sweep(*more: str) -> Callable[[Path, OpenAIStub | None], list[str]]:
    return lambda tmp, stub: ["-m", *_offline(*more)(tmp, stub), f"hydra.sweep.dir={tmp / 'sweep'}"]


def _llm(tmp: Path, stub: OpenAIStub | None) -> list[str]:
    assert stub is not None
    stages = []
    for stage in ("answerer", "judge"):
        stages += [
            f"{stage}=gpt4o",
            f"{stage}.endpoint.base_url={stub.base_url}",
            f"++{stage}.endpoint.preflight=false",
        ]
    return [*_offline(f"cache.dir={tmp / 'cache'}")(tmp, stub), *stages]


def _handling(job: Job, tmp: Path, stub: OpenAIStub | None) -> None:
    """The job's own code runs: it catches SIGTERM and SIGHUP (a bare interpreter does
    not), so its modules are loading or Hydra composes (no output tells these apart). Both
    bits are read: the handlers are installed one after the other."""

    def caught() -> bool:
        status = Path(f"/proc/{job.proc.pid}/status").read_text()
        mask = int(re.search(r"SigCgt:\s*([0-9a-f]+)", status)[1], 16)
        return all(mask & (1 << (signum - 1)) for signum in (TERM, HUP))

    job.wait_for(caught, "the job's signal handlers")


def _migrating(job: Job, tmp: Path, stub: OpenAIStub | None) -> None:
    job.wait_for(lambda: job.saw("Creating initial MLflow database tables"), "the migration")


STAGES: dict[str, Stage] = {
    "starting": Stage(_offline(), _handling, fresh_store=True),
    # The tracking child creates and migrates a fresh store while the job works or waits.
    "store": Stage(_offline(), _migrating, fresh_store=True),
    # Sessions are generated (minutes of them): the first one is on disk.
    "sessions": Stage(
        _offline("transcript.sessions=200", "cache.dir=${hydra:runtime.output_dir}/cache"),
        lambda job, tmp, stub: job.wait_for(
            lambda: any(tmp.glob("outputs/*/*/cache/sessions/*.json")), "a generated session"
        ),
    ),
    # LLM calls in flight at a stub that answers none of them within the test.
    "llm": Stage(
        _llm, lambda job, tmp, stub: job.wait_for(lambda: bool(stub.requests), "a call"), llm=True
    ),
    # Points prepared in worker processes (issue 31), calls at a stub that answers none.
    "workers": Stage(
        lambda tmp, stub: [
            *_llm(tmp, stub),
            "transcript.sessions=12",
            "transcript.target_tokens=160000",
            "execution.prepare_workers=2",
        ],
        lambda job, tmp, stub: job.wait_for(lambda: len(workers_of(job)) == 2, "two workers"),
        llm=True,
    ),
    # Evaluated: the scorecard is out, the record goes to the store.
    "logging": Stage(
        _offline(), lambda job, tmp, stub: job.wait_for(lambda: job.saw("evaluated"), "the end")
    ),
    # A sweep (basic launcher, runs logged in-process), its second job working.
    # A sweep (basic launcher, runs logged in-process): its first job done and logged, its
    # second one generating sessions.
    "sweep": Stage(
        _sweep("transcript.sessions=1,200", "cache.dir=${hydra:runtime.output_dir}/cache"),
        lambda job, tmp, stub: job.wait_for(
            lambda: any(tmp.glob("sweep/1/cache/sessions/*")), "the second job"
        ),
    ),
    # A sweep's first job migrating a fresh store in-process: the signal waits for it.
    "sweep_store": Stage(_sweep("seed=0,1"), _migrating, fresh_store=True),
}

CASES: dict[str, tuple[str, tuple[int, ...]]] = {
    **{f"starting-{n}": ("starting", s) for n, s in (("int", (INT,)), ("term", (TERM,)))},
    "starting-hup": ("starting", (HUP,)),
    **{
        f"{stage}-{n}": (stage, s)
        for stage in ("store", "sessions", "llm", "logging", "sweep")
        for n, s in (("int", (INT,)), ("int-int", (INT, INT)), ("term", (TERM,)))
    },
    "store-hup": ("store", (HUP,)),
    "llm-hup": ("llm", (HUP,)),
    "llm-term-term": ("llm", (TERM, TERM)),
    "sweep-hup": ("sweep", (HUP,)),
    "sweep_store-int": ("sweep_store", (INT,)),
    "sweep_store-term": ("sweep_store", (TERM,)),
    "llm-kill": ("llm", (KILL,)),
    **{f"workers-{n}": ("workers", s) for n, s in (("int", (INT,)), ("term", (TERM,)))},
    "workers-int-int": ("workers", (INT, INT)),
    "workers-kill": ("workers", (KILL,)),
    "sweep-kill": ("sweep", (KILL,)),
}


@dataclass
class Played:
    code: int | None = None
    stderr: list[str] = field(default_factory=list)
    store: Path = Path()
    problem: str | None = None  # the harness's own failure (a stage never reached, a hang)
    seconds: float = 0.0
    left: list[int] = field(default_factory=list)  # worker processes alive after the job


def workers_of(job: Job) -> list:
    """The job's worker processes preparing points (``multiprocessing`` spawned children)."""
    import psutil

    try:
        children = psutil.Process(job.proc.pid).children()
    except psutil.Error:
        return []
    found = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            pass
    return found


def left_alive(workers: list) -> list[int]:
    """Which of ``workers`` are still alive 10 s after their job ended."""
    import psutil

    _, alive = psutil.wait_procs(workers, timeout=10)
    return [p.pid for p in alive]


def _env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_PROXY": "*"}


def play(name: str, base: Path, migrated_db: Path) -> Played:
    stage_name, signums = CASES[name]
    stage = STAGES[stage_name]
    tmp = base / name
    store = tmp / "mlruns"
    store.mkdir(parents=True)
    if not stage.fresh_store:
        shutil.copyfile(migrated_db, store / migrated_db.name)
    stub = OpenAIStub(reply=scripted_reply, latency=3600).start() if stage.llm else None
    played = Played(store=store)
    started = time.monotonic()
    try:
        job = Job(stage.args(tmp, stub), tmp, _env())
        try:
            stage.arrive(job, tmp, stub)
            workers = workers_of(job)
            for i, signum in enumerate(signums):
                if i:
                    time.sleep(GAP_S)
                job.proc.send_signal(signum)
            played.code = job.finish()
            played.left = left_alive(workers)
        finally:
            if job.proc.poll() is None:
                job.proc.kill()
        played.stderr = job.err
    except AssertionError as exc:
        played.problem = str(exc)
    finally:
        if stub is not None:
            stub.stop()
        played.seconds = time.monotonic() - started
    return played


@pytest.fixture(scope="module")
def played(tmp_path_factory, migrated_db) -> dict[str, Played]:
    base = tmp_path_factory.mktemp("signals")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(play, name, base, migrated_db) for name in CASES}
        return {name: future.result() for name, future in futures.items()}


def client_of(store: Path):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")


def settled_runs(store: Path, still_running_ok: bool = False) -> list:
    """The store's runs once none is RUNNING (a tracking child or a helper may still be
    ending one after the job's exit); with ``still_running_ok``, as they are then."""
    if not (store / "mlflow.db").exists():
        return []
    client = client_of(store)
    deadline = time.monotonic() + 30
    while True:
        ids = [e.experiment_id for e in client.search_experiments()]
        runs = client.search_runs(ids) if ids else []
        if still_running_ok or all(r.info.status != "RUNNING" for r in runs):
            return runs
        if time.monotonic() > deadline:
            return runs
        time.sleep(0.1)


def assert_store_opens(store: Path) -> None:
    """The store is not refused: it opens as a job opens it (checked, migrated if needed)."""
    from benchmark.tracking.store_check import open_store, store_lock
    from benchmark.tracking.tracking_uri import store_dir_store

    local = store_dir_store(store)
    with store_lock(local):
        open_store(local)


LABEL = {INT: "Ctrl-C", TERM: "SIGTERM", HUP: "SIGHUP"}


@pytest.mark.parametrize("name", [n for n, (_, s) in CASES.items() if KILL not in s])
def test_a_signal_ends_the_job_in_one_line_with_its_run_killed(played, name):
    case = played[name]
    assert case.problem is None, case.problem
    signums = CASES[name][1]
    stderr = "\n".join(case.stderr)
    assert case.code == 128 + signums[-1], stderr[-3000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    errors = [line for line in case.stderr if line.startswith("error:")]
    assert len(errors) == 1, stderr[-3000:]
    (line,) = errors
    assert line.startswith(f"error: interrupted ({LABEL[signums[0]]})") or line.startswith(
        f"error: interrupted again ({LABEL[signums[-1]]})"
    ), line
    runs = settled_runs(case.store)
    assert all(r.info.status != "RUNNING" for r in runs), [r.info for r in runs]
    jobs = [r for r in runs if r.data.tags.get("report") != "true"]
    for run in jobs:  # a sweep's first job may have finished whole before the signal
        assert run.info.status in ("KILLED", "FINISHED"), run.info
        if run.info.status == "FINISHED":
            assert run.data.metrics and CASES[name][0] == "sweep", run.info
    parents = [r for r in runs if r.data.tags.get("report") == "true"]
    assert all(r.info.status == "KILLED" for r in parents), [r.info for r in parents]
    killed = [r.info.run_id for r in jobs if r.info.status == "KILLED"]
    named = re.findall(r"run ([0-9a-f]{32})", line)
    if "nothing was logged" in line:
        assert not killed, line
    elif named:  # the line names the run, and it is the KILLED one
        assert set(named) <= set(killed), (line, killed)
    else:  # a second signal before the run's id was known: what ends it, and where
        assert "is ended as KILLED in" in line and "by process" in line, line
    if killed:
        assert "KILLED" in line, line
    assert len(killed) <= 1
    assert not case.left, f"worker processes left running: {case.left}"
    assert_store_opens(case.store)


def test_a_store_signalled_while_migrating_takes_the_next_job(played, tmp_path):
    """Signalled while its store is created, a job leaves a store the next job uses."""
    for name in ("store-term", "sweep_store-int"):
        store = played[name].store
        proc = run_benchmark(
            [*OFFLINE, f"tracking.store_dir={store}"], tmp_path, _env(), timeout=LIMIT_S
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        finished = [r for r in settled_runs(store) if r.info.status == "FINISHED"]
        assert any(r.data.metrics for r in finished)


def test_sigkill_of_a_single_job_leaves_its_run_killed_by_the_tracking_child(played):
    """The tracking child sees its input end and ends the job's run KILLED."""
    case = played["llm-kill"]
    assert case.problem is None, case.problem
    assert case.code == -KILL
    runs = settled_runs(case.store)
    assert [r.info.status for r in runs] == ["KILLED"]
    assert_store_opens(case.store)


def test_sigkill_of_a_job_preparing_in_workers_leaves_no_worker_and_its_run_killed(played):
    """The kernel ends the workers with the job (PR_SET_PDEATHSIG); the tracking child
    ends its run KILLED."""
    case = played["workers-kill"]
    assert case.problem is None, case.problem
    assert case.code == -KILL
    assert not case.left, f"worker processes left running: {case.left}"
    assert [r.info.status for r in settled_runs(case.store)] == ["KILLED"]


def test_sigkill_of_a_sweep_job_leaves_no_finished_empty_run(played):
    """A sweep logs in-process: nothing of it outlives SIGKILL, so its job's run stays
    RUNNING (the MLflow UI shows it so; reports read FINISHED runs only). None is FINISHED
    empty, and the store still opens."""
    case = played["sweep-kill"]
    assert case.problem is None, case.problem
    assert case.code == -KILL
    runs = settled_runs(case.store, still_running_ok=True)
    assert all(
        r.data.metrics
        for r in runs
        if r.info.status == "FINISHED" and r.data.tags.get("report") != "true"
    )
    assert_store_opens(case.store)
