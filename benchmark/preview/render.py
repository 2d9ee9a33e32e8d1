"""The tables of ``python -m benchmark.preview``, drawn from a file's report."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

_SHOWN_WARNINGS = 10  # per file in the tables; --json has them all
_FACT_CHARS = 60  # a gold fact in the --probes listing is cut to this


def render(report: dict[str, Any], console: Console, probes: bool) -> None:
    console.print(f"[bold]{escape(report['path'])}[/]", soft_wrap=True)
    summary = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    summary.add_column(style="bold")
    summary.add_column()
    msgs, calls, toks = report["messages"], report["tool_calls"], report["tokens"]
    big = toks["largest"]
    summary.add_row("format", report["format"])
    summary.add_row("size", f"{human_size(report['size'])} ({report['size']:,} bytes)")
    summary.add_row("sha256", report["sha256"][:12])
    summary.add_row("messages", f"{msgs['total']}: {_counts(msgs['by_role'])}")
    if msgs["summaries"]:
        shown = ", ".join(str(i) for i in msgs["summaries"])
        summary.add_row(
            "summaries", f"{len(msgs['summaries'])} already in the log, never probed: {shown}"
        )
    summary.add_row("tool calls", str(calls["total"]))
    summary.add_row(
        "tokens",
        f"{toks['total']:,} (largest: message {big['index']}, {big['role']}, "
        f"{big['tokens']:,} tokens)",
    )
    summary.add_row("warnings", str(len(report["warnings"])))
    if report["redactions"]:
        found = ", ".join(f"{k} {n}" for k, n in sorted(report["redactions"].items()))
        summary.add_row("redacted", found)
    console.print(summary)
    if calls["by_tool"]:
        tools = Table(
            box=box.SIMPLE_HEAD, show_edge=False, title="tool calls", title_justify="left"
        )
        tools.add_column("tool")
        tools.add_column("calls", justify="right")
        for name, count in calls["by_tool"].items():
            tools.add_row(escape(name), str(count))
        console.print(tools)
    for warning in report["warnings"][:_SHOWN_WARNINGS]:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if len(report["warnings"]) > _SHOWN_WARNINGS:
        more = len(report["warnings"]) - _SHOWN_WARNINGS
        console.print(f"[yellow]warning:[/] {more} more (--json lists them all)")
    for note in report["notes"]:
        console.print(f"note: {escape(note)}", soft_wrap=True)
    comp = report["compaction"]
    console.print(
        f"compaction: trigger {comp['trigger']:,.0f} tokens (context_window "
        f"{comp['context_window']:,} x trigger_ratio {comp['trigger_ratio']:g}), "
        f"head {_head(comp)}, tail {comp['tail_tokens']:,} tokens, "
        f"points={comp['points']}"
    )
    if report["head_warning"]:
        console.print(f"[yellow]warning:[/] {escape(report['head_warning'])}", soft_wrap=True)
    if report["no_points"]:
        console.print(escape(report["no_points"]), soft_wrap=True)
        return
    _points_table(report, console)
    if report["no_probes"]:
        console.print(f"[yellow]warning:[/] {escape(report['no_probes'])}", soft_wrap=True)
    if probes:
        _probe_listing(report, console)


def _points_table(report: dict[str, Any], console: Console) -> None:
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, title="compaction points", title_justify="left"
    )
    for name in ("point", "head", "region", "tail", "tokens before", "region tokens"):
        table.add_column(name, justify="right")
    for ptype in report["probe_types"]:
        table.add_column(ptype, justify="right")
    table.add_column("probes", justify="right")
    for p in report["points"]:
        table.add_row(
            str(p["ordinal"]),
            f"0-{p['head_end']}",
            f"{p['head_end']}-{p['tail_start']}",
            f"{p['tail_start']}-{p['end']}",
            f"{p['tokens_before']:,}",
            f"{p['region_tokens']:,}",
            *(str(p["probes"][t]) for t in report["probe_types"]),
            str(sum(p["probes"].values())),
        )
    table.caption = "messages as [start-end) indices; probes from the offline extractor"
    if report.get("repeated_probes"):
        table.caption += (
            f"; {report['repeated_probes']} repeated at a later point left out (asked once)"
        )
    console.print(table)


def _probe_listing(report: dict[str, Any], console: Console) -> None:
    for p in report["points"]:
        console.print(f"[bold]probes at point {p['ordinal']}[/]")
        for probe in p["probe_list"]:
            facts = "; ".join(f"{f['kind']}: {_short(f['text'])}" for f in probe["facts"])
            console.print(f"  {probe['type']:<12} {escape(probe['question'])}", soft_wrap=True)
            console.print(f"  {'':<12} gold: {escape(facts)}", style="dim", soft_wrap=True)
            if "action" in probe:
                step = escape(probe["answer"])
                console.print(f"  {'':<12} gold step: {step}", style="dim", soft_wrap=True)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _FACT_CHARS else flat[: _FACT_CHARS - 1] + "…"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def render_review(sample: list[dict[str, Any]], console: Console) -> None:
    """Probes to judge by hand: question, gold facts, and each evidence in its context."""
    for n, probe in enumerate(sample, 1):
        console.rule(f"[bold]{n}. {probe['type']}[/] {escape(probe['id'])}")
        console.print(f"file: {escape(probe['path'])} (point {probe['point']})", soft_wrap=True)
        console.print(f"[bold]Q:[/] {escape(probe['question'])}", soft_wrap=True)
        for fact in probe["facts"]:
            console.print(f"[bold]gold[/] {fact['kind']}: {escape(fact['text'])}", soft_wrap=True)
        if "action" in probe:
            console.print(f"[bold]gold step[/] {escape(probe['answer'])}", soft_wrap=True)
        for ev in probe["evidence"]:
            console.print(
                f"[dim]evidence: message {ev['message_index']} ({ev['role']}), quote:[/] "
                f"{escape(ev['quote'])}",
                soft_wrap=True,
            )
            for line in ev["context"].split("\n"):
                console.print(f"  | {escape(line)}", style="dim", soft_wrap=True)
        console.print("judge: right / wrong (why)")
    console.print(f"{len(sample)} probe(s) to review")


def _head(comp: dict[str, Any]) -> str:
    """The protected head as configured, and what ``auto`` made of this file."""
    if comp["head_messages"] == "auto":
        return f"auto ({comp['head_end']} messages: prelude + first request)"
    return f"{comp['head_messages']} messages"
