"""One file's report as plain data: what the importer found, and what a job's config would
find in it (compaction points, probes from the offline extractor). ``--json`` prints it as
is; ``render`` draws the tables from it, so the two never disagree.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, get_args

from benchmark.config.schema import BenchmarkConfig
from benchmark.probe.extract import generate_probes, why_no_probes
from benchmark.probe.models import PROBE_TYPES, Probe
from benchmark.probe.repeats import FirstAsked
from benchmark.redaction import redactor_for
from benchmark.run.compaction import (
    CompactionConfig,
    find_points,
    head_warning,
    protected_head_end,
)
from benchmark.transcript.formats import NotATranscript, SubagentLog, TranscriptError, import_file
from benchmark.transcript.models import Role, Transcript
from benchmark.transcript.sources import SIDE_FILE, SUBAGENT_SKIPPED


def preview_file(
    path: Path, fmt: str, config: BenchmarkConfig, probes: bool, named: bool = True
) -> dict[str, Any]:
    """One file's report as plain data (the ``--json`` object; the tables are drawn from it).

    The transcript is redacted as a job redacts it (``config.redaction``), so the probes
    shown are the job's, and no secret of the file is printed. A sub-agent's log met in a
    scan (``named=False``), or a side file that is no session, is reported ``skipped``, as a
    job skips it.
    """
    max_line = int(config.transcript.max_line_mb * 2**20)  # type: ignore[union-attr]
    redactor = redactor_for(config)
    try:
        item = import_file(path, fmt, max_line)
    except TranscriptError as exc:
        if isinstance(exc, SubagentLog) and not named:
            return {"path": str(path), "skipped": SUBAGENT_SKIPPED}
        if isinstance(exc, NotATranscript) and not named:
            return {
                "path": str(path),
                "skipped": SIDE_FILE.format(why=redactor.text(exc.located())),
            }
        return {"path": str(path), "error": redactor.text(str(exc))}
    t, redactions = redactor.transcript(item.transcript)
    counts = t.message_tokens
    roles = Counter(m.role for m in t.messages)
    tools = Counter(c.function.name for m in t.messages for c in m.tool_calls or [])
    largest = max(range(len(counts)), key=counts.__getitem__)
    comp = config.compaction
    points = find_points(t, comp)
    probe_config = config.probe.model_copy(update={"writer": None})
    types = [p for p in PROBE_TYPES if p in probe_config.types]
    point_reports = []
    first_asked = FirstAsked()  # as a job does: a repeated question is asked once
    made = 0
    for point in points:
        found = first_asked(generate_probes(t, point, probe_config))
        made += len(found)
        report: dict[str, Any] = {
            **point.model_dump(exclude={"transcript_id"}),
            "region_tokens": sum(counts[point.head_end : point.tail_start]),
            "probes": {p: sum(1 for x in found if x.type == p) for p in types},
        }
        if probes:
            report["probe_list"] = [
                {
                    "id": x.id,
                    "type": x.type,
                    "question": x.question,
                    "facts": [{"kind": f.kind, "text": f.text} for f in x.gold.facts],
                    "evidence": [_evidence(t, e.message_index, e.quote) for e in x.evidence],
                    **_step(x),
                }
                for x in found
            ]
        point_reports.append(report)
    return {
        "path": item.path,
        "format": item.format,
        "size": item.size,
        "sha256": item.sha256,
        "transcript_id": t.id,
        "messages": {
            "total": len(t.messages),
            "by_role": {r: roles[r] for r in get_args(Role) if roles[r]},
            "summaries": t.summaries,  # already a summary in the log: never probed
        },
        "tool_calls": {
            "total": sum(tools.values()),
            "by_tool": dict(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
        "tokens": {
            "total": t.total_tokens,
            "largest": {
                "index": largest,
                "role": t.messages[largest].role,
                "tokens": counts[largest],
            },
        },
        "warnings": [redactor.text(w) for w in item.warnings],
        "notes": [redactor.text(n) for n in item.notes],
        "redactions": redactions,
        "compaction": {
            **comp.model_dump(),
            "trigger": comp.context_window * comp.trigger_ratio,
            "head_end": protected_head_end(t.messages, comp),
        },
        "probe_types": types,
        "probe_writer_ignored": config.probe.writer is not None,  # offline extractor used
        "points": point_reports,
        "repeated_probes": first_asked.repeated,
        "no_points": None if points else why_no_points(t, comp),
        "head_warning": head_warning(t, comp),
        "no_probes": why_no_probes(t, points, probe_config) if points and not made else None,
    }


def why_no_points(t: Transcript, comp: CompactionConfig) -> str:
    """One line: why the replay never compacts, and an override that would make it."""
    total, trigger = t.total_tokens, comp.context_window * comp.trigger_ratio
    setting = (
        f"the trigger of {trigger:,.0f} (compaction.context_window={comp.context_window} "
        f"x trigger_ratio={comp.trigger_ratio:g})"
    )
    if total <= trigger:
        why = f"its {total:,} tokens never pass {setting}"
    else:
        why = (
            f"its {total:,} tokens pass {setting}, but the protected head "
            f"(head_messages={comp.head_messages}) and tail (tail_tokens={comp.tail_tokens}) "
            "leave no message to compact"
        )
    hint = _suggestion(t, comp)
    return f"no compaction point: {why}; " + (
        f"try {hint}" if hint else "no smaller window finds one (too few messages)"
    )


def _suggestion(t: Transcript, comp: CompactionConfig) -> str | None:
    """The first of a few override sets that gives at least one point, checked by replaying."""
    ratio = comp.trigger_ratio
    window = _round_down(t.total_tokens / ratio / 2)
    head = sum(t.message_tokens[: protected_head_end(t.messages, comp)])
    roomy = _round_down((head + t.total_tokens) / 2 / ratio)  # trigger halfway past the head
    roomy_tail = _round_down(max(roomy * ratio - head, 1) / 4)
    candidates = [
        {"tail_tokens": _round_down(comp.context_window * ratio / 4)},
        {"context_window": window, "tail_tokens": min(comp.tail_tokens, int(window * ratio / 4))},
        {"context_window": window, "tail_tokens": 0},
        {"context_window": roomy, "tail_tokens": min(comp.tail_tokens, roomy_tail)},
    ]
    found = []
    for update in candidates:
        changed = {k: v for k, v in update.items() if getattr(comp, k) != v}
        if not changed:
            continue
        try:
            trial = CompactionConfig.model_validate({**comp.model_dump(), **changed})
        except ValueError:
            continue
        if find_points(t, trial):
            found.append((head_warning(t, trial) is not None, changed))
    if not found:
        return None
    # A window the protected head fills compacts at every message: offered only as a last resort.
    _, changed = min(found, key=lambda f: f[0])
    return " ".join(f"compaction.{k}={v}" for k, v in changed.items())


def _round_down(value: float) -> int:
    """Two significant digits, so a suggested override reads like one a person would type."""
    n = max(int(value), 1)
    scale = 10 ** max(len(str(n)) - 2, 0)
    return n // scale * scale


CONTEXT_LINES = 2  # lines shown around an evidence quote in --review


def _evidence(t: Transcript, index: int, quote: str) -> dict[str, Any]:
    """An evidence quote with the lines around it in its message, for a person to judge."""
    msg = t.messages[index]
    text = msg.render()
    lines = text.split("\n")
    pos = text.find(quote)
    first = text.count("\n", 0, pos) if pos >= 0 else 0
    last = first + quote.count("\n")
    lo, hi = max(0, first - CONTEXT_LINES), min(len(lines), last + CONTEXT_LINES + 1)
    return {
        "message_index": index,
        "role": msg.role,
        "quote": quote,
        "context": "\n".join(lines[lo:hi]),
    }


def review_sample(reports: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` probes drawn at random (seeded) from every point of every file, each with its
    file and point, so a person can judge the gold against its evidence."""
    import random

    pool = [
        {"path": r["path"], "point": p["ordinal"], **probe}
        for r in reports
        if "error" not in r and "skipped" not in r
        for p in r["points"]
        for probe in p.get("probe_list", [])
    ]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def _step(probe: Probe) -> dict[str, Any]:
    """A next-action probe's structured gold (the step the log took), as the listing shows it."""
    action = probe.gold.action
    return {"action": action.model_dump(), "answer": probe.gold.answer} if action else {}
