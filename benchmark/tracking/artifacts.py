"""The files a job leaves behind, written to a folder before they are logged.

Transcript text in them is redacted already (as it loaded); what is scrubbed here is
text from elsewhere: the manifest's paths, import warnings and skip reasons, and
every ``error`` (an exception's message may quote a server reply or a config value).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from benchmark.redaction import scrub_strings
from benchmark.results import JobResult

_ERRORS = frozenset({"error"})


def write_artifacts(result: JobResult, resolved_config: dict[str, Any], folder: Path) -> None:
    """Config, probes, compacted contexts, answers and judge records as JSON/YAML files.

    Judge records reference the compacted context by point instead of
    repeating it per probe (it is in ``contexts/``).
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(resolved_config, sort_keys=False))
    if result.inputs is not None:
        (folder / "transcripts").mkdir(exist_ok=True)
        manifest = scrub_strings(result.inputs.model_dump(mode="json"))
        (folder / "transcripts" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    probes, answers, judgments = [], [], []
    for point in result.points:
        pid = f"{point.point.transcript_id}/point_{point.point.ordinal}"
        context_file = folder / "contexts" / f"{pid}.json"
        context_file.parent.mkdir(parents=True, exist_ok=True)
        context_file.write_text(
            json.dumps(
                {
                    "point": point.point.model_dump(),
                    "tokens_after": point.tokens_after,
                    "messages": [m.model_dump(exclude_none=True) for m in point.context],
                },
                indent=1,
            )
        )
        for r in point.probes:
            probes.append(r.probe.model_dump())
            answers.append({"probe_id": r.probe.id, **r.answer.model_dump()})
            judgments.append(
                {
                    "probe_id": r.probe.id,
                    "context": f"contexts/{pid}.json",
                    "probe_question": r.probe.question,
                    "model_response": r.answer.text,
                    "ground_truth": r.probe.gold.model_dump(),
                    **r.judgment.model_dump(),
                    "score": r.score,
                }
            )
    if result.judge_records:
        _write_jsonl(folder / "judge_records.jsonl", result.judge_records)
    (folder / "probes.json").write_text(json.dumps(probes, indent=1))
    _write_jsonl(folder / "answers.jsonl", answers)
    _write_jsonl(folder / "judgments.jsonl", judgments)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    rows = scrub_strings(rows, _ERRORS)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
