"""The files a job's run holds (its record's artifacts), as text by path.

Transcript text in them is redacted already (as it loaded); what is scrubbed here is
text from elsewhere: the manifest's paths, import warnings and skip reasons, and
every ``error`` (an exception's message may quote a server reply or a config value).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from benchmark.redaction import scrub_strings
from benchmark.results import JobResult

_ERRORS = frozenset({"error"})


def job_files(result: JobResult, resolved_config: dict[str, Any]) -> dict[str, str]:
    """Config, probes, compacted contexts, answers and judge records as JSON/YAML files.

    Judge records reference the compacted context by point instead of
    repeating it per probe (it is in ``contexts/``).
    """
    files = {"config.yaml": yaml.safe_dump(resolved_config, sort_keys=False)}
    if result.inputs is not None:
        manifest = scrub_strings(result.inputs.model_dump(mode="json"))
        files["transcripts/manifest.json"] = json.dumps(manifest, indent=1)
    probes, answers, judgments = [], [], []
    for point in result.points:
        pid = f"{point.point.transcript_id}/point_{point.point.ordinal}"
        files[f"contexts/{pid}.json"] = json.dumps(
            {
                "point": point.point.model_dump(),
                "tokens_after": point.tokens_after,
                "messages": [m.model_dump(exclude_none=True) for m in point.context],
            },
            indent=1,
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
        files["judge_records.jsonl"] = _jsonl(result.judge_records)
    files["probes.json"] = json.dumps(probes, indent=1)
    files["answers.jsonl"] = _jsonl(answers)
    files["judgments.jsonl"] = _jsonl(judgments)
    return files


def _jsonl(rows: list[dict[str, Any]]) -> str:
    rows = scrub_strings(rows, _ERRORS)
    return "".join(json.dumps(row) + "\n" for row in rows)
