"""``python -m benchmark.preview``: what a file holds and what a job's config would find in it.

Expected values are computed here from the importer, ``find_points`` and
``generate_probes`` directly, not copied from the CLI's output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO
from conftest import call_message as _call
from conftest import result_message as _result

from benchmark.preview import main
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.repeats import FirstAsked
from benchmark.run.compaction import CompactionConfig, find_points
from benchmark.transcript.formats import import_file

SMALL = ["compaction.context_window=600", "compaction.tail_tokens=120"]
SMALL_COMPACTION = CompactionConfig(context_window=600, tail_tokens=120)
FAILED_COMMAND = "pytest tests/test_slugify.py -q"
ERROR_LINE = "AssertionError: assert 'hello-world-' == 'hello-world'"


SLUGIFY = (
    "import re\nimport unicodedata\n\n\ndef slugify(text: str) -> str:\n"
    '    """Lower-case ASCII slug of ``text`` for URLs."""\n'
    "    text = unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode()\n"
    "    text = re.sub(r'[^a-zA-Z0-9]+', '-', text).lower()\n"
    "    return text.lstrip('-')\n"
)
CONFIG_PY = "\n".join(
    f"{name.upper()} = {value!r}  # {note}"
    for name, value, note in [
        ("site_name", "Field Notes", "shown in the page title"),
        ("base_url", "https://notes.example.org", "absolute links in the feed"),
        ("posts_dir", "content/posts", "markdown sources"),
        ("output_dir", "public", "rendered site"),
        ("feed_items", 20, "entries in atom.xml"),
        ("date_format", "%Y-%m-%d", "permalink dates"),
        ("timezone", "Europe/Berlin", "for post timestamps"),
        ("drafts", False, "render drafts locally only"),
    ]
)
PYTEST_OUTPUT = (
    "F.\n"
    "=================================== FAILURES ===================================\n"
    "___________________________ test_trailing_separator ____________________________\n"
    "    def test_trailing_separator():\n"
    ">       assert slugify('Hello, World!') == 'hello-world'\n"
    f"E       {ERROR_LINE}\n"
    "E         - hello-world\nE         + hello-world-\n\n"
    "tests/test_slugify.py:9: AssertionError\n"
    "=========================== short test summary info ============================\n"
    f"FAILED tests/test_slugify.py::test_trailing_separator - {ERROR_LINE}\n"
    "1 failed, 1 passed in 0.04s"
)

SESSION = [
    {"role": "system", "content": "You are a coding agent working in a static site generator."},
    {
        "role": "user",
        "content": "Post slugs end with a dash when the title ends in punctuation. Fix "
        "slugify in src/site/text.py and add a regression test.",
    },
    _call(
        "call_read_1",
        "read_file",
        {"path": "src/site/text.py"},
        "Let me look at the current implementation first.",
    ),
    _result("call_read_1", SLUGIFY),
    _call("call_read_2", "read_file", {"path": "src/site/config.py"}),
    _result("call_read_2", CONFIG_PY),
    _call(
        "call_write_1",
        "write_file",
        {
            "path": "tests/test_slugify.py",
            "content": "from site.text import slugify\n\n\ndef test_basic():\n"
            "    assert slugify('Hello World') == 'hello-world'\n\n\n"
            "def test_trailing_separator():\n"
            "    assert slugify('Hello, World!') == 'hello-world'\n",
        },
        "I'll write a regression test that reproduces the trailing dash.",
    ),
    _result("call_write_1", "Wrote 231 bytes to tests/test_slugify.py"),
    _call("call_bash_1", "bash", {"command": FAILED_COMMAND}),
    _result("call_bash_1", PYTEST_OUTPUT),
    {
        "role": "assistant",
        "content": "The root cause is that slugify only strips separators from the left, so "
        "a title ending in punctuation keeps its final dash. Decision: strip dashes on both "
        "sides with strip('-') rather than post-processing permalinks, because every caller "
        "of slugify expects a clean slug and the feed builder reuses it for atom ids.",
    },
    _call(
        "call_read_3",
        "read_file",
        {"path": "src/site/feed.py"},
        "Checking the feed builder before changing the helper it depends on.",
    ),
    _result(
        "call_read_3",
        "from site.text import slugify\n\n\ndef entry_id(post):\n"
        "    return f'{BASE_URL}/posts/{post.date:%Y/%m}/{slugify(post.title)}'\n\n\n"
        "def build_feed(posts):\n    return [entry_id(p) for p in posts[:FEED_ITEMS]]\n",
    ),
    {
        "role": "assistant",
        "content": "The feed ids are derived from the slug, so existing ids that ended in a dash "
        "will change. That only affects posts whose titles end in punctuation; three posts in "
        "content/posts do, and readers of the atom feed may see them as new entries once.",
    },
    _call(
        "call_bash_2",
        "bash",
        {"command": 'grep -rn "title:.*[!?.]$" content/posts | head'},
    ),
    _result(
        "call_bash_2",
        "content/posts/2023-04-02-why-static.md:2:title: Why static?\n"
        "content/posts/2023-09-17-moving-house.md:2:title: Moving house!\n"
        "content/posts/2024-01-05-notes.md:2:title: Notes on notes.",
    ),
    {
        "role": "assistant",
        "content": "Plan:\n- [x] Reproduce the trailing dash\n- [ ] Fix slugify\n"
        "- [ ] Add redirects for the three affected posts\n- [ ] Update the changelog",
    },
    # The log ends mid-call: the importer warns about a call with no result.
    _call(
        "call_write_2",
        "write_file",
        {"path": "src/site/text.py", "content": SLUGIFY.replace("lstrip", "strip")},
    ),
]


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "slug-fix.json"
    path.write_text(json.dumps({"messages": SESSION}, indent=1))
    return path


def _report(capsys, *argv: str) -> list[dict]:
    assert main(["--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _expected(path: Path, compaction: CompactionConfig, probe: ProbeConfig):
    item = import_file(path)
    points = find_points(item.transcript, compaction)
    first_asked = FirstAsked()  # a job asks a repeated question once
    return item, points, [first_asked(generate_probes(item.transcript, p, probe)) for p in points]


def test_tables_show_format_roles_tools_tokens_and_probe_counts(session_file, capsys):
    item, points, probes = _expected(session_file, SMALL_COMPACTION, ProbeConfig())
    assert points, "the fixture must compact with the small window"
    assert main([str(session_file), *SMALL]) == 0
    out = capsys.readouterr().out
    t = item.transcript
    assert re.search(r"^format\s+chat\s*$", out, re.M)
    assert re.search(rf"^sha256\s+{item.sha256[:12]}\s*$", out, re.M)
    roles = Counter(m.role for m in t.messages)
    role_text = ", ".join(f"{r} {roles[r]}" for r in ("system", "user", "assistant", "tool"))
    assert re.search(rf"^messages\s+{len(t.messages)}: {role_text}\s*$", out, re.M)
    tools = Counter(c.function.name for m in t.messages for c in m.tool_calls or [])
    assert tools == {"read_file": 3, "write_file": 2, "bash": 2}
    assert re.search(r"^tool calls\s+7\s*$", out, re.M)
    rows = re.findall(r"^\s*(read_file|write_file|bash)\s+(\d+)\s*$", out, re.M)
    assert [(name, int(n)) for name, n in rows] == [
        ("read_file", 3),
        ("bash", 2),
        ("write_file", 2),
    ]
    counts = t.message_tokens
    big = max(range(len(counts)), key=counts.__getitem__)
    assert f"{t.total_tokens:,} (largest: message {big}, {t.messages[big].role}," in out
    assert re.search(rf"^warnings\s+{len(item.warnings)}\s*$", out, re.M) and item.warnings
    assert "(call_write_2)" in out  # the call the log ends on is reported
    for point, found in zip(points, probes, strict=True):
        by_type = Counter(p.type for p in found)
        region = sum(counts[point.head_end : point.tail_start])
        cells = [
            point.ordinal,
            f"0-{point.head_end}",
            f"{point.head_end}-{point.tail_start}",
            f"{point.tail_start}-{point.end}",
            f"{point.tokens_before:,}",
            f"{region:,}",
            *(by_type[k] for k in ("recall", "artifact", "continuation", "decision")),
            len(found),
        ]
        row = r"\s+".join(re.escape(str(c)) for c in cells)
        assert re.search(rf"^\s*{row}\s*$", out, re.M), f"no row for point {point.ordinal}"


def test_json_structure_matches_importer_and_extractor(session_file, capsys):
    probe = ProbeConfig(per_type=2, types=["recall", "artifact"])
    item, points, probes = _expected(session_file, SMALL_COMPACTION, probe)
    (report,) = _report(
        capsys, str(session_file), *SMALL, "probe.per_type=2", "probe.types=[recall,artifact]"
    )
    t = item.transcript
    assert report["path"] == str(session_file) and report["format"] == "chat"
    assert (report["size"], report["sha256"]) == (session_file.stat().st_size, item.sha256)
    assert report["messages"]["total"] == len(t.messages)
    assert report["messages"]["by_role"] == dict(Counter(m.role for m in t.messages))
    assert list(report["tool_calls"]["by_tool"].items()) == [
        ("read_file", 3),
        ("bash", 2),
        ("write_file", 2),
    ]
    assert report["tokens"]["total"] == t.total_tokens
    assert report["tokens"]["largest"]["tokens"] == max(t.message_tokens)
    assert report["warnings"] == item.warnings
    assert report["compaction"]["context_window"] == 600
    assert report["compaction"]["trigger"] == 480
    assert report["probe_types"] == ["recall", "artifact"]
    assert report["probe_writer_ignored"] is False
    assert report["no_points"] is None
    assert [(p["head_end"], p["tail_start"], p["end"]) for p in report["points"]] == [
        (p.head_end, p.tail_start, p.end) for p in points
    ]
    for got, found in zip(report["points"], probes, strict=True):
        counts = Counter(p.type for p in found)
        assert got["probes"] == {"recall": counts["recall"], "artifact": counts["artifact"]}
        assert max(got["probes"].values()) <= 2
        assert "probe_list" not in got


def test_probes_lists_every_probe_with_its_gold(session_file, capsys):
    _, points, probes = _expected(session_file, SMALL_COMPACTION, ProbeConfig())
    all_probes = [p for found in probes for p in found]
    facts = {f.text for p in all_probes for f in p.gold.facts}
    assert FAILED_COMMAND in facts or ERROR_LINE in facts  # the failing run is asked about
    assert {"tests/test_slugify.py", "src/site/config.py"} <= facts  # written and read files

    (report,) = _report(capsys, str(session_file), *SMALL, "--probes")
    listed = [p for point in report["points"] for p in point["probe_list"]]
    assert [(p["id"], p["type"], p["question"]) for p in listed] == [
        (p.id, p.type, p.question) for p in all_probes
    ]
    assert [[f["text"] for f in p["facts"]] for p in listed] == [
        [f.text for f in p.gold.facts] for p in all_probes
    ]

    assert main([str(session_file), "--probes", *SMALL]) == 0
    out = capsys.readouterr().out
    for point in points:
        assert f"probes at point {point.ordinal}" in out
    for probe in all_probes:
        first = probe.gold.facts[0]
        gold = f"gold: {first.kind}: {' '.join(first.text.split())[:40]}"
        assert re.search(
            rf"^  {probe.type}\s+{re.escape(probe.question)}\n\s+{re.escape(gold)}", out, re.M
        )


def test_no_points_says_why_and_suggests_a_working_override(session_file, capsys):
    item = import_file(session_file)
    total = item.transcript.total_tokens
    assert main([str(session_file)]) == 0  # the default 200k window
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("no compaction point")]
    assert f"its {total:,} tokens never pass the trigger of 160,000" in line
    assert "compaction.context_window=200000 x trigger_ratio=0.8" in line
    hint = re.search(r"try (compaction\.\S+=\d+(?: compaction\.\S+=\d+)*)$", line)
    assert hint, line
    settings = dict(o.removeprefix("compaction.").split("=") for o in hint.group(1).split())
    trial = CompactionConfig(**{k: int(v) for k, v in settings.items()})
    assert find_points(item.transcript, trial)  # the suggestion really compacts
    (report,) = _report(capsys, str(session_file), *hint.group(1).split())
    assert report["points"] and report["no_points"] is None


def test_no_points_in_a_session_shorter_than_the_head(tmp_path, capsys):
    path = tmp_path / "short.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in SESSION[:2]))
    (report,) = _report(
        capsys, str(path), "compaction.context_window=20", "compaction.tail_tokens=1"
    )
    assert report["format"] == "chat" and report["points"] == []
    assert report["no_points"].startswith("no compaction point: its ")
    assert report["no_points"].endswith("no smaller window finds one (too few messages)")


def test_head_over_the_trigger_and_no_probe_are_warned(tmp_path, capsys):
    """Small talk behind a long head: compacts at every message, and gives no probe."""
    chat = [{"role": "system", "content": "You are a helpful assistant. " * 20}]
    for n in range(6):
        chat.append({"role": "user", "content": f"Thanks, that helps a lot, round {n}."})
        chat.append({"role": "assistant", "content": "Glad to hear it, happy to help any time."})
    path = tmp_path / "small_talk.json"
    path.write_text(json.dumps(chat))
    overrides = ["compaction.context_window=100", "compaction.tail_tokens=20"]
    (report,) = _report(capsys, str(path), *overrides)
    assert report["points"] and not any(sum(p["probes"].values()) for p in report["points"])
    assert report["head_warning"].startswith("the protected head alone (2 message(s), ")
    assert report["no_probes"].startswith(f"{len(report['points'])} compaction point(s) but no")
    assert main([str(path), *overrides]) == 0
    out = capsys.readouterr().out
    assert "warning: the protected head alone" in out and "but no probe (" in out


def test_corrupt_file_among_good_ones(session_file, tmp_path, capsys):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": \n')
    other = tmp_path / "again.json"
    other.write_text(session_file.read_text())
    assert main([str(tmp_path), *SMALL]) == 1  # a folder: every .json/.jsonl in it
    captured = capsys.readouterr()
    (error,) = captured.err.splitlines()
    assert error.startswith(f"error: {bad}: line 2: invalid JSON")
    assert len(re.findall(r"^format\s+chat\s*$", captured.out, re.M)) == 2
    assert "3 files, 1 could not be imported" in captured.out

    assert main(["--json", str(bad), str(session_file), *SMALL]) == 1
    reports = json.loads(capsys.readouterr().out)
    assert [sorted(r) == ["error", "path"] for r in reports] == [True, False]
    assert reports[0]["error"].startswith(f"{bad}: line 2:")
    assert reports[1]["format"] == "chat"


# The arguments after the file (split at spaces) and the start of the one error line.
BAD_ARGUMENTS = {
    "compaction.nope=1": "error: Could not override 'compaction.nope'.",
    "compaction.context_window=-5": "error: config key 'compaction.context_window'",
    "probe=nope": "error: unknown probe 'nope' (choose from: default, llm_gpt4o",
    "compaction.context_window=[1": "error: bad override 'compaction.context_window=[1'",
    "--format yaml": "error: argument --format: invalid choice: 'yaml'",
}


@pytest.mark.parametrize(("argv", "message"), BAD_ARGUMENTS.items())
def test_bad_options_and_overrides_exit_2_in_one_line(session_file, capsys, argv, message):
    assert main([str(session_file), *argv.split()]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(message)


def test_missing_path_exits_2(tmp_path, capsys):
    assert main([str(tmp_path / "nope.json")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: no such file or folder: '{tmp_path / 'nope.json'}'\n"


def test_llm_writer_config_still_uses_the_extractor(session_file, capsys):
    assert main([str(session_file), "probe=llm_gpt4o", *SMALL]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("probe.writer is an LLM writer; probes shown are the")
    assert "compaction points" in out
    (report,) = _report(capsys, str(session_file), "probe=llm_gpt4o", *SMALL)
    (default,) = _report(capsys, str(session_file), *SMALL)
    assert report["probe_writer_ignored"] and not default["probe_writer_ignored"]
    assert report["points"] == default["points"]


def test_forced_format_is_used(session_file, capsys):
    assert main([str(session_file), "--format", "swe_agent"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {session_file}: ")


def test_swe_agent_folder(shared_data, capsys):
    reports = _report(capsys, str(shared_data / "swe-agent"))
    assert [r["format"] for r in reports] == ["swe_agent"] * 3
    assert all(r["tool_calls"]["total"] > 0 for r in reports)


def test_module_runs_without_the_llm_stack(session_file):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "benchmark.preview", str(session_file)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert re.search(r"^format\s+chat\s*$", proc.stdout, re.M)
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in ("mlflow", "openai", "aiohttp")}


def test_secrets_are_redacted_as_a_job_redacts_them(tmp_path, capsys):
    key = "sk-proj-" + "Q7w9" * 12
    secret = [
        *SESSION[:3],
        _call("c9", "bash", {"command": "cat .env"}),
        _result("c9", f"OPENAI_API_KEY={key}\nDEBUG=1"),
        *SESSION[3:],
    ]
    path = tmp_path / "with-key.json"
    path.write_text(json.dumps({"messages": secret}))
    (report,) = _report(capsys, str(path), *SMALL, "--probes")
    assert report["redactions"] == {"openai_key": 1}
    assert key not in json.dumps(report) and key[8:20] not in json.dumps(report)
    assert main([str(path), *SMALL, "--probes"]) == 0
    out = capsys.readouterr().out
    assert "redacted" in out and "openai_key 1" in out and key[8:20] not in out


def test_review_prints_seeded_probes_with_evidence_in_context(session_file, capsys):
    assert main([str(session_file), "--review", "3", "--seed", "7", *SMALL]) == 0
    first = capsys.readouterr().out
    assert "3 probe(s) to review" in first
    assert first.count("Q: ") == 3 and "gold " in first and "evidence: message " in first
    assert "  | " in first  # the lines around each quote
    assert main([str(session_file), "--review", "3", "--seed", "7", *SMALL]) == 0
    assert capsys.readouterr().out == first  # the same seed draws the same probes
    assert main(["--json", str(session_file), "--review", "2", *SMALL]) == 0
    sample = json.loads(capsys.readouterr().out)
    for probe in sample:
        for ev in probe["evidence"]:
            assert ev["quote"] in ev["context"] and ev["role"] in ("user", "assistant", "tool")
    assert main([str(session_file), "--review", "0", *SMALL]) == 2
    assert "--review" in capsys.readouterr().err


def test_probes_lists_next_action_probes_with_their_step(session_file, capsys):
    asked = [
        *SMALL,
        "probe.types=[next_action]",
    ]
    (report,) = _report(capsys, str(session_file), *asked, "--probes")
    listed = [p for point in report["points"] for p in point["probe_list"]]
    assert listed and all(p["type"] == "next_action" for p in listed)
    for probe in listed:
        step = probe["action"]
        assert probe["answer"].startswith(f"`{step['verb']}` `{step['target']}`")
    assert main([str(session_file), "--probes", *asked]) == 0
    out = capsys.readouterr().out
    assert out.count("gold step: `") == len(listed)


def test_benchmark_inspect_is_the_preview_command(session_file):
    """The issue's ``python -m benchmark.inspect --probes`` runs the same command."""
    argv = [str(session_file), "--probes", *SMALL, "probe.types=[next_action]"]
    shown = [
        subprocess.run(
            [sys.executable, "-m", name, *argv],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
        for name in ("benchmark.inspect", "benchmark.preview")
    ]
    assert [p.returncode for p in shown] == [0, 0], shown[0].stderr
    assert "gold step: `" in shown[0].stdout and shown[0].stdout == shown[1].stdout
