"""Shared test helpers: real Hydra composition of ``conf/``, small fast overrides, and the
message, endpoint and process builders the test files share."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig
from openai_stub import openai_stub_fixture  # noqa: F401  (registers the `openai_stub` fixture)

if TYPE_CHECKING:
    from openai_stub import OpenAIStub

    from benchmark.probe.models import Probe
    from benchmark.run.compaction import CompactionPoint
    from benchmark.transcript.models import ToolCall, Transcript

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SHARED_DATA = REPO.parent / "shared" / "data"

# A short session with a small window: several compaction points in well under a second.
SMALL = [
    "transcript.sessions=1",
    "transcript.target_tokens=30000",
    "compaction.context_window=16000",
    "compaction.tail_tokens=2500",
    "tracking=disabled",
    "cache.dir=null",
]


def compose_config(overrides: list[str] | None = None) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=overrides or [])


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.fixture
def offline(monkeypatch, tmp_path) -> Path:
    """A job run in-process as a user would start it with no key: the working folder in
    tmp_path, no API key and no HYDRA_FULL_ERROR in the environment."""
    monkeypatch.chdir(tmp_path)
    for var in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present beside the repository")
    return SHARED_DATA


@contextlib.contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """A case that runs past ``seconds`` fails (a ``TimeoutError`` raised by SIGALRM in the
    main thread, in-process jobs included), not the whole suite."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the case ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def _close_llm_clients():
    """No aiohttp pool outlives its test."""
    yield
    from benchmark.llm import close_all

    close_all()


@pytest.fixture(autouse=True)
def _no_signal_state_left():
    """A test whose in-process job a signal stopped leaves that signal recorded; a later
    in-process job of the same worker would take it for its own."""
    yield
    from benchmark.run import interrupt

    interrupt.forget()


@pytest.fixture(autouse=True)
def _no_hydra_config_left():
    """A test whose in-process ``main()`` stops in Hydra (``--cfg``, ``--help``, a refused
    override) leaves Hydra's global config set, its output folder unset; a later in-process
    job would take it for its own. Each test starts with the config it found."""
    from hydra.core.hydra_config import HydraConfig

    before = HydraConfig.instance().cfg
    yield
    HydraConfig.instance().cfg = before


@pytest.fixture(scope="session")
def default_sessions(tmp_path_factory):
    """The default job's generated sessions (composed config, real generator), loaded once
    per test session through a session cache that tests may share (``cache_dir``).

    Under pytest-xdist the workers share one generation: the first fills a folder beside
    their base folders (under a file lock), each copies its sessions into its own cache."""
    from filelock import FileLock

    from benchmark.config.schema import validate
    from benchmark.redaction import redactor_for
    from benchmark.run.storage import SESSION_DIR
    from benchmark.transcript.sources import load_transcripts

    config = validate(compose_config())
    cache_dir = tmp_path_factory.mktemp("cache")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the parent is this run's, not the user's
        shared = tmp_path_factory.getbasetemp().parent / "default-sessions"
        with FileLock(f"{shared}.lock"):
            if not (shared / SESSION_DIR).is_dir():
                load_transcripts(config.transcript, redactor_for(config), shared)
        shutil.copytree(shared / SESSION_DIR, cache_dir / SESSION_DIR)
    loaded = load_transcripts(config.transcript, redactor_for(config), cache_dir)
    return config, loaded, cache_dir


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory) -> Path:
    """An empty MLflow SQLite store, created and migrated once per test session: migrating
    costs seconds, a copy milliseconds. No experiment in it (an experiment records its
    artifact folder, which must be the copying test's)."""
    from mlflow import MlflowClient

    from benchmark.tracking.store_check import DB_NAME

    db = tmp_path_factory.mktemp("migrated") / DB_NAME
    MlflowClient(tracking_uri=f"sqlite:///{db}").search_experiments()
    return db


@pytest.fixture
def mlflow_store(tmp_path, migrated_db) -> Path:
    """``tmp_path/mlruns``: a store folder holding a copy of the migrated store, for tests
    about what a job logs rather than about creating a store (test_store_concurrency.py)."""
    store = tmp_path / "mlruns"
    store.mkdir()
    shutil.copyfile(migrated_db, store / migrated_db.name)
    return store


def run_point(config, transcript, point, policy, answerer, judge):
    """One compaction point, start to finish, on the calling thread: what a job does to
    one point, with stages a test can wrap (spies, broken answerers)."""
    from benchmark.judge.measured import not_measured
    from benchmark.probe.set_cache import load_or_generate
    from benchmark.run.evaluation import evaluate
    from benchmark.run.scheduling import compact_point, point_result

    probes = load_or_generate(transcript, point, config.probe, config.cache_path)
    context = compact_point(config, transcript, point, policy)
    rollup = config.rubric.without(not_measured(config.rubric, judge, answerer))
    results = [evaluate(p, context, answerer, judge, config.rubric, rollup) for p in probes]
    return point_result(config, point, context, results)


# --- builders the test files share ----------------------------------------------------------


def call_message(call_id: str, name: str, args: dict, content: str | None = None) -> dict:
    """An OpenAI-chat assistant message making one tool call (``args`` JSON-encoded)."""
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def result_message(call_id: str, text: str) -> dict:
    """The tool's answer to ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def say(text: str) -> dict:
    """An assistant message with prose only."""
    return {"role": "assistant", "content": text}


def tool_call(call_id: str, name: str, **args: object) -> ToolCall:
    """A model-side tool call with keyword arguments as its JSON arguments."""
    from benchmark.transcript.models import FunctionCall, ToolCall

    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=json.dumps(args)))


def split_session(
    transcript: Transcript, head: int, region: int, tail: int, tokens_before: int = 0
) -> CompactionPoint:
    """The point compacting ``region`` messages after the first ``head``, ``tail`` kept."""
    from benchmark.run.compaction import CompactionPoint

    return CompactionPoint(
        transcript_id=transcript.id,
        ordinal=0,
        head_end=head,
        tail_start=head + region,
        end=head + region + tail,
        tokens_before=tokens_before,
    )


def stub_endpoint(stub: OpenAIStub, key_env: str, **fields: object) -> dict:
    """An endpoint block for ``stub`` (the key read from ``key_env``); ``fields`` override."""
    return {
        "name": "stubbed",
        "model": "gpt-4o-mini",
        "base_url": stub.base_url,
        "api_key_env": key_env,
        "price_input_per_1m": 0.15,
        "price_output_per_1m": 0.60,
        **fields,
    }


def run_benchmark(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m benchmark *args`` as a user runs it, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_benchmark(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``python -m benchmark *args`` started in the background, its pipes open as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "benchmark", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def probes_at_last_point(transcript: Transcript) -> list[Probe]:
    """The default probes at the last point of a window just under the whole transcript
    (a small fixture gives one point)."""
    from benchmark.probe.config import ProbeConfig
    from benchmark.probe.extract import generate_probes
    from benchmark.run.compaction import CompactionConfig, find_points

    config = CompactionConfig(
        context_window=transcript.total_tokens, trigger_ratio=0.97, head_messages=2, tail_tokens=40
    )
    return generate_probes(transcript, find_points(transcript, config)[-1], ProbeConfig())


@pytest.fixture
def stage_on_stub():
    """``build(cls, endpoint, **kw)``: an LLM stage (answerer, judge, summarizer) on
    ``endpoint``, updated by ``kw["endpoint"]``; every stage built is closed after the test."""
    built: list = []

    def build(cls: type, base: dict, /, **kw: object):
        stage = cls(endpoint={**base, **kw.pop("endpoint", {})}, **kw)
        built.append(stage)
        return stage

    yield build
    for stage in built:
        stage.close()


def recording(reply: Callable[[dict], object]) -> tuple[list[str], Callable[[dict], object]]:
    """A stub reply hook that answers as ``reply`` does and records each request body
    (canonical JSON, thread-safe) in the returned list."""
    seen: list[str] = []
    lock = threading.Lock()

    def record(body: dict) -> object:
        with lock:
            seen.append(json.dumps(body, sort_keys=True))
        return reply(body)

    return seen, record


def swe_agent_job(shared_data: Path, *overrides: str) -> list[str]:
    """Overrides of a job over the real SWE-agent trajectories (the README's window)."""
    return [
        "transcript=files",
        f"transcript.path={shared_data / 'swe-agent'}",
        "compaction.context_window=1500",
        "compaction.tail_tokens=200",
        "tracking=disabled",
        "cache.dir=null",
        *overrides,
    ]
