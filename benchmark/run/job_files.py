"""The files a job's run holds, written as its points finish, so the job holds none of them.

Each point's compacted context (as JSON and as readable text), its probes, answers,
judgments and an LLM judge's records go to files in the run's folder (``RunFiles``) the
moment the point is done; the job keeps only what its metrics and tables need
(``RunFiles.point`` returns the point without its context and judge records, and keeps
one short row per judgment for ``judgments_table.json``). ``benchmark.tracking.log_run`` logs the
folder as it is. The few small files (config, manifest) stay text (``job_files``).

Transcript text in them is redacted already (as it loaded); what is scrubbed here is
text from elsewhere: the manifest's paths, import warnings and skip reasons, and
every ``error`` (an exception's message may quote a server reply or a config value).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import yaml

from benchmark.judge.base import CriterionResult, Judgment
from benchmark.redaction import scrub_strings
from benchmark.run.context_files import ContextFiles
from benchmark.run.results import JobResult, PointResult, ProbeResult, leading_columns
from benchmark.run.run_record import RunRecord, columns
from benchmark.run.storage import write_atomic, writing

_ERRORS = frozenset({"error"})
RUN_FILES = "run_files"  # the folder in the job's Hydra output folder
RECORD_FILE = "run_record.json"  # the run, when the store refused it (``keep_record``)
REASONING_CHARS = 300  # of a judgment's reasoning in its table row (all of it: judgments.jsonl)


def job_files(result: JobResult, resolved_config: dict[str, Any]) -> dict[str, str]:
    """The run's small files as text: the config and the transcripts' manifest."""
    files = {"config.yaml": yaml.safe_dump(resolved_config, sort_keys=False)}
    if result.inputs is not None:
        manifest = scrub_strings(result.inputs.model_dump(mode="json"))
        files["transcripts/manifest.json"] = json.dumps(manifest, indent=1)
    return files


def output_dir() -> Path | None:
    """This job's Hydra output folder; None outside a Hydra job."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    try:
        found = HydraConfig.get().runtime.output_dir
    except Exception:  # a Hydra config left from a --cfg call: it has no output folder
        return None
    return Path(found) if found else None


def run_folder() -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """Where a job streams its run files: ``run_files/`` in Hydra's output folder, emptied
    (it is the job's own), or a temporary folder outside Hydra (returned, to keep alive)."""
    found = output_dir()
    if found is not None:
        folder = found / RUN_FILES
        shutil.rmtree(folder, ignore_errors=True)  # a rerun in the same folder starts empty
        return folder, None
    temporary = tempfile.TemporaryDirectory(prefix="benchmark-run-")
    return Path(temporary.name), temporary


def keep_record(record: RunRecord) -> str:
    """The run ``record`` could not be logged: keep it as ``run_record.json`` in the job's
    output folder (redacted, as logged), beside its run files. Says where, for the error
    line; a record no folder can take leaves the scorecard printed above."""
    found = output_dir()
    if found is None:
        return "nothing of the job was kept but the scorecard above"
    path = found / RECORD_FILE
    try:
        write_atomic(path, record.model_dump_json(indent=1))
    except OSError as exc:
        return f"the job's results could not be kept in {found} either ({exc.strerror or exc})"
    return f"the job's results are kept in {path} and {found / RUN_FILES}"


class RunFiles:
    """Writes probes, compacted contexts, answers, judgments and judge records as JSON
    (Lines) files in ``folder``, point by point, and each context as text a person reads
    (``contexts/<transcript>/point_<k>.txt``: the labelled blocks the answerer and judge
    read, with real line breaks). ``judgment_rows``: the judgments table's rows so far.

    Judge records reference the compacted context by point instead of repeating it per
    probe (it is in ``contexts/``); a context that is the uncompacted session prefix is
    written once per transcript and pointed to (``benchmark.run.context_files``).
    ``probes.json`` is one JSON list, written item by item; ``judge_records.jsonl`` exists
    only when a judge kept records.
    """

    def __init__(self, folder: Path, policy: str = "") -> None:
        self.folder = folder
        self.policy = policy
        self.judgment_rows: list[dict[str, object]] = []
        folder.mkdir(parents=True, exist_ok=True)
        self._probes = self._open("probes.json")
        self._answers = self._open("answers.jsonl")
        self._judgments = self._open("judgments.jsonl")
        self._records: IO[str] | None = None
        self._contexts = ContextFiles(folder / "contexts")
        self._listed = 0  # probes written to probes.json so far

    def _open(self, name: str) -> IO[str]:
        return open(self.folder / name, "w", encoding="utf-8")  # noqa: SIM115 (closed in close)

    def point(self, point: PointResult) -> PointResult:
        """Write ``point``'s files; return it as the job keeps it (``lean``)."""
        with writing(self.folder):  # a full disk names the folder
            return self._point(point)

    def _point(self, point: PointResult) -> PointResult:
        pid = f"{point.point.transcript_id}/point_{point.point.ordinal}"
        readable = self._contexts.write(point)
        for r in point.probes:
            self._list(r.probe.model_dump())
            _line(self._answers, {"probe_id": r.probe.id, **r.answer.model_dump()})
            _line(
                self._judgments,
                {
                    "probe_id": r.probe.id,
                    "context": f"contexts/{pid}.json",
                    "probe_question": r.probe.question,
                    "model_response": r.answer.text,
                    "ground_truth": r.probe.gold.model_dump(),
                    **r.judgment.model_dump(),
                    "score": r.score,
                },
            )
            self.judgment_rows.append(judgment_row(r, self.policy, readable))
            for record in r.judge_records():
                if self._records is None:
                    self._records = self._open("judge_records.jsonl")
                _line(self._records, record)
        return lean(point)

    def _list(self, item: dict[str, Any]) -> None:
        """One item of ``probes.json``, laid out as ``json.dumps(items, indent=1)`` would."""
        text = json.dumps(item, indent=1).replace("\n", "\n ")  # newlines in strings are \n
        self._probes.write(("[\n " if not self._listed else ",\n ") + text)
        self._listed += 1

    def close(self) -> None:
        """Finish ``probes.json`` and close every file (safe to call twice; a close the
        disk refuses still closes the others, then raises naming the folder)."""
        refused: list[OSError] = []
        with writing(self.folder):
            if not self._probes.closed:
                with contextlib.suppress(OSError):  # close says so, below
                    self._probes.write("\n]" if self._listed else "[]")
            for file in (self._probes, self._answers, self._judgments, self._records):
                try:
                    if file is not None:
                        file.close()  # closed even when its last flush fails
                except OSError as exc:
                    refused.append(exc)
            if refused:
                raise refused[0]


def judgment_row(result: ProbeResult, policy: str, context: str) -> dict[str, object]:
    """One judgment as a row of ``judgments_table.json``: what the Evaluation view lines
    up across policies by probe (scores, answer, gold, the judge's short reasoning, why it
    failed), and the readable context file it was judged against."""
    judgment = result.judgment
    reasoning = "; ".join(f"{r.criterion}: {r.reasoning}" for r in judgment.results if r.reasoning)
    if len(reasoning) > REASONING_CHARS:
        reasoning = reasoning[: REASONING_CHARS - 1] + "\u2026"
    row = {
        **leading_columns(result, policy),
        **{f"c/{c}": s for c, s in judgment.scores().items()},
        "question": result.probe.question,
        "answer": result.answer.text,
        "gold": result.probe.gold.answer,
        "reasoning": reasoning,
        "failed": result.failed,
        "error": result.answer.error if result.answer.failed else judgment.error,
        "context": context,
    }
    return scrub_strings(row, _ERRORS)


def judgments_table(rows: list[dict[str, object]]) -> dict[str, list[object]]:
    """``rows`` as MLflow table columns, every criterion's score right after ``score``:
    criteria differ by probe type, so first-seen order would put some after the text."""
    table = columns(rows)
    criteria = [k for k in table if k.startswith("c/")]
    rest = [k for k in table if not k.startswith("c/")]
    at = rest.index("score") + 1 if "score" in rest else len(rest)
    return {k: table[k] for k in [*rest[:at], *criteria, *rest[at:]]}


def lean(point: PointResult) -> PointResult:
    """``point`` with what its files hold and no metric needs left out: its context, and
    each judgment's record and reasoning (scores, failures and panel members stay)."""
    return point.model_copy(update={"context": [], "probes": [_lean(r) for r in point.probes]})


def _lean(result: ProbeResult) -> ProbeResult:
    update: dict[str, Any] = {"judgment": _scores_only(result.judgment)}
    if result.control is not None:
        update["control"] = _lean(result.control)
    return result.model_copy(update=update)


def _scores_only(judgment: Judgment) -> Judgment:
    results = [CriterionResult(criterion=r.criterion, score=r.score) for r in judgment.results]
    return judgment.model_copy(update={"results": results, "record": None})


def _line(file: IO[str], row: dict[str, Any]) -> None:
    file.write(json.dumps(scrub_strings(row, _ERRORS)) + "\n")
