"""The task-success arm inside a job: sessions in, probes and resumes at the same points.

``prepare`` makes (or imports) the tau2 sessions and writes them as chat transcripts,
so the usual pipeline finds their compaction points, asks its probes and compacts
them; ``sink`` keeps each point's compacted context as it goes by; ``run`` resumes
every point twice (compacted, and the uncompacted control) concurrently on the LLM
loop, and ``outcome`` gives the metrics, the per-point table and the scorecard line.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from benchmark.config.schema import BenchmarkConfig
from benchmark.llm import Endpoint, close_all
from benchmark.llm.loop import run
from benchmark.redaction import redactor_for
from benchmark.run.parts import Parts, response_cache
from benchmark.run.results import PointResult
from benchmark.task_success import tau2_env
from benchmark.task_success.config import RoleConfig
from benchmark.task_success.report import PointRecord, TaskOutcome, outcome
from benchmark.task_success.roles import Role
from benchmark.task_success.runs import (
    Players,
    ResumeResult,
    generate,
    longest_first,
    resume,
    turns_left,
    uncompacted,
)
from benchmark.task_success.session import Session, import_results
from benchmark.transcript.config import FileTranscripts
from benchmark.transcript.models import Transcript
from benchmark.transcript.scan import expand_paths

log = logging.getLogger(__name__)


class TaskArm:
    """One job's task-success arm (``config.task`` set): built before any work."""

    def __init__(self, config: BenchmarkConfig, parts: Parts) -> None:
        assert config.task is not None and config.agent is not None and config.user is not None
        tau2_env.tau2_loaded()  # a missing extra fails here, in one line, before any work
        self.config = config
        self.stub: Any = None
        cache = response_cache(config)
        agent = Role(self._endpoint(config.agent, "agent"), "agent", parts.ledger, cache)
        user = Role(self._endpoint(config.user, "user"), "user", parts.ledger, cache)
        self.players = Players(agent, user)
        self.sessions: dict[str, tuple[Session, Any]] = {}  # transcript id -> (session, task)
        self.points: list[tuple[PointResult, list[Any]]] = []  # (point, its compacted context)
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def _endpoint(self, role: RoleConfig, key: str) -> Endpoint:
        fields = dict(role.endpoint)
        if role.scripted is not None:  # the loopback stub, started here, plays the role
            fields["base_url"] = self._stub_url()
            fields["api_key_env"] = None
        fields.setdefault("name", role.name)
        return Endpoint.model_validate(fields)

    def _stub_url(self) -> str:
        if self.stub is None:
            from benchmark.stub.server import OpenAIStub
            from benchmark.task_success.scripted import ScriptedTau2

            mode = self.config.agent.scripted if self.config.agent else None
            self.stub = OpenAIStub(record=False)
            self.stub.reply = ScriptedTau2(
                mode=mode if mode in ("context", "repeat") else "context"
            )
            self.stub.start()
        return self.stub.base_url

    # -- sessions -------------------------------------------------------------------------

    def prepare(self) -> BenchmarkConfig:
        """Make or import the sessions, write them as chat files, and return the job's
        config reading those files as its transcripts."""
        from benchmark.llm.preflight import preflight

        preflight(self.players)
        config, task = self.config, self.config.task
        assert task is not None
        if config.transcript.kind == "files":  # tau2 results.json logs, imported
            pairs = self._imported(config.transcript.path)
        else:
            pairs = self._generated(task.tasks)
        self._folder = tempfile.TemporaryDirectory(prefix="tau2-sessions-")
        folder = Path(self._folder.name)
        for session, found in pairs:
            self.sessions[session.id] = (session, found)
            (folder / f"{session.id}.json").write_text(_json(session.chat()), encoding="utf-8")
        log.info("task success: %d session(s) of %d task(s)", len(pairs), len(task.tasks))
        files = FileTranscripts(kind="files", name=task.name, path=str(folder), format="chat")
        return config.model_copy(update={"transcript": files})

    def _generated(self, refs: list[str]) -> list[tuple[Session, Any]]:
        task = self.config.task
        assert task is not None
        found = []
        for ref in refs:
            domain, _, task_id = ref.partition("/")
            one = tau2_env.task(domain, task_id)
            tau2_env.check_scorable(one, domain)
            found.append((domain, one))
        cache = self.config.cache_path / "tau2_sessions" if self.config.cache_path else None
        steps, seed = task.session_max_steps, self.config.seed

        async def made() -> list[Session]:
            slots = asyncio.Semaphore(task.max_resumes_in_flight)

            async def one(domain: str, t: Any) -> Session:
                async with slots:
                    return await generate(domain, t, self.players, steps, seed, cache)

            return list(await asyncio.gather(*(one(d, t) for d, t in found)))

        return list(zip(run(made()), (t for _, t in found), strict=True))

    def _imported(self, path: str | list[str]) -> list[tuple[Session, Any]]:
        from tau2.data_model.tasks import Task

        pairs = []
        for file in expand_paths(path):
            for session, logged in import_results(file):
                key = f"transcript.path: {file}"
                found = (
                    Task.model_validate(logged)
                    if logged
                    else tau2_env.task(session.domain, session.task_id, key)
                )
                tau2_env.check_scorable(found, session.domain, key)
                pairs.append((session, found))
        return pairs

    # -- points and resumes ---------------------------------------------------------------

    def sink(
        self, inner: Callable[[PointResult], PointResult]
    ) -> Callable[[PointResult], PointResult]:
        """``inner`` (the job's files), keeping each point's compacted context for its resume."""

        def keep(point: PointResult) -> PointResult:
            if point.point.transcript_id in self.sessions:
                self.points.append((point, list(point.context)))
            return inner(point)

        return keep

    def run(self) -> list[PointRecord]:
        """Resume every kept point (and its control) at once, within the in-flight limit,
        the longest expected first (:func:`runs.longest_first`)."""
        task = self.config.task
        assert task is not None
        redactor = redactor_for(self.config)
        steps = (self.players, task.max_steps)

        async def everything() -> list[tuple[ResumeResult | None, ResumeResult | None]]:
            jobs: list[tuple[int, Coroutine[Any, Any, ResumeResult]]] = []
            pairs: list[tuple[int | None, int | None]] = []  # per point: its jobs' indexes
            for point, context in self.points:
                session, found = self.sessions[point.point.transcript_id]
                end = session.turn_end(point.point.end)  # the point counts agent-visible turns
                left = turns_left(session, end)
                main = control = None
                if point.compaction_error is None:
                    main = len(jobs)
                    jobs.append((left, resume(session, found, end, context, *steps)))
                if task.control:
                    raw = Transcript(
                        id=session.id, source="tau2", messages=uncompacted(session.turns[:end])
                    )
                    history = redactor.transcript(raw)[0].messages
                    control = len(jobs)
                    jobs.append((left, resume(session, found, end, history, *steps)))
                pairs.append((main, control))
            done = await longest_first(jobs, task.max_resumes_in_flight)
            return [
                (None if m is None else done[m], None if c is None else done[c]) for m, c in pairs
            ]

        try:
            results = run(everything())
        finally:
            close_all()  # the pipeline closed its clients; these pools end here
        return [
            PointRecord.of(point, self.sessions[point.point.transcript_id], main, control)
            for (point, _), (main, control) in zip(self.points, results, strict=True)
        ]

    def outcome(self, records: list[PointRecord]) -> TaskOutcome:
        return outcome(records, self.config.policy.name, self.config.stats.cluster_by)

    def close(self) -> None:
        if self.stub is not None:
            self.stub.stop()
            self.stub = None
        close_all()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None


def _json(data: Any) -> str:
    import json

    return json.dumps(data, ensure_ascii=False)
