"""Secrets in what the command line makes the program print or run: ``--cfg``, ``--info`` and
``--help`` (Hydra prints the composed config itself), an argument Hydra echoes back, a sweep
folder holding a key; and user patterns (``redaction.patterns``) that backtrack without end,
which must end in one line within seconds, not hold the job for hours.

The planted keys and the leak check are ``test_secrets_names.py``'s.
"""

from __future__ import annotations

import json
import time

import pytest
from conftest import run_benchmark
from test_secrets_names import (
    ENV,
    ENV_KEY,
    SMALL,
    aws,
    github,
    leaks,
    one_error_line,
    plain,
    run_main,
    session,
)


@pytest.fixture
def offline(offline, monkeypatch):
    """conftest's ``offline``, with one key planted in the environment."""
    monkeypatch.setenv("BENCH_DEPLOY_TOKEN", ENV_KEY)
    return offline


SHOWN = {
    "cfg_job_api_key": (["--cfg", "job"], "+judge.endpoint.api_key={k}", plain()),
    "cfg_all_api_key": (["--cfg", "all"], "+judge.endpoint.api_key={k}", plain()),
    "cfg_hydra_overrides": (["--cfg", "hydra"], "+judge.endpoint.password={k}", plain()),
    "cfg_job_url_password": (
        ["--cfg", "job"],
        "judge.endpoint.base_url=https://bob:{k}@llm.internal/v1",
        plain(),
    ),
    "cfg_package_leaf": (
        ["--cfg", "job", "-p", "judge.endpoint.api_key"],
        "+judge.endpoint.api_key={k}",
        plain(),
    ),
    "cfg_resolved_environment": (
        ["--cfg", "job", "--resolve"],
        "+judge.endpoint.note=${{oc.env:BENCH_DEPLOY_TOKEN}}",
        ENV_KEY,
    ),
    "cfg_shaped_key_anywhere": (["--cfg", "job"], "tracking.run_name=x_{k}", github()),
    "info_config": (["--info", "config"], "+judge.endpoint.api_key={k}", plain()),
    "help": (["--help"], "+judge.endpoint.api_key={k}", plain()),
}


@pytest.mark.parametrize("case", sorted(SHOWN))
def test_what_hydra_prints_holds_no_key(case, offline, monkeypatch, capsys):
    flags, override, key = SHOWN[case]
    code, out, err = run_main([*flags, "judge=gpt4o", override.format(k=key)], monkeypatch, capsys)
    assert code == 0, err
    assert "Traceback" not in err
    assert out.strip(), "Hydra printed something"
    assert leaks(key, [offline], out, err) == []
    if "api_key" in override and "-p" not in flags and "--help" not in flags:
        assert "api_key: <redacted>" in out


def test_an_argument_hydra_echoes_back_is_scrubbed(offline, monkeypatch, capsys):
    key = plain()
    code, out, err = run_main(
        ["policy=none", "-m", f"+judge.endpoint.api_key={key}", "stray"], monkeypatch, capsys
    )
    assert code == 2
    assert "unrecognized arguments" in err and "Traceback" not in err
    assert leaks(key, [offline], out, err) == []


def test_a_key_in_the_sweep_folder_stays_out_of_files_and_the_console(tmp_path, mlflow_store):
    key = aws()
    args = ["-m", f"hydra.sweep.dir=multirun/sweep_{key}", "policy=truncate"]
    proc = run_benchmark([*args, *SMALL, "report.auto=false"], tmp_path, ENV, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "Sweep comparison" in proc.stdout  # its runs were found by the (scrubbed) sweep id
    assert leaks(key, [tmp_path], proc.stdout, proc.stderr) == []


# --- user patterns ---------------------------------------------------------------------------

BACKTRACKING = {
    "nested_plus": "(a+)+$",
    "overlapping_alternatives": "(a|aa)+b",
    "adjacent_repeats": "(x+x+)+y",
    "words_and_spaces": r"(\w+\s?)+$",
    "duplicate_alternatives": "(a|a)+b",
}


@pytest.mark.parametrize("case", sorted(BACKTRACKING))
def test_a_backtracking_pattern_is_refused_before_any_work(case, offline, monkeypatch, capsys):
    started = time.monotonic()
    override = f"+redaction.patterns.{case}='{BACKTRACKING[case]}'"
    code, out, err = run_main([override, *SMALL], monkeypatch, capsys)
    assert time.monotonic() - started < 60
    assert code == 2, err
    one_error_line(err, f"'redaction.patterns.{case}'", "backtracks without end")
    assert not (offline / "mlruns").exists()  # refused before the store was touched


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("tkt_[0-9", "invalid regular expression"), ("a*", "matches the empty string")],
)
def test_a_bad_pattern_is_one_line_naming_its_key(pattern, expected, offline, monkeypatch, capsys):
    code, out, err = run_main(
        [f"+redaction.patterns.mine='{pattern}'", *SMALL], monkeypatch, capsys
    )
    assert code == 2, err
    one_error_line(err, "'redaction.patterns.mine'", expected)


def test_a_repeat_the_engine_handles_runs_cleanly(offline, mlflow_store, monkeypatch, capsys):
    """``(.*a){20}`` backtracks in Python's ``re``; the ``regex`` engine's runs stay short."""
    started = time.monotonic()
    code, out, err = run_main(["+redaction.patterns.many='(.*a){20}'", *SMALL], monkeypatch, capsys)
    assert code == 0, err
    assert time.monotonic() - started < 60 and "Traceback" not in err


def test_a_pattern_that_backtracks_on_the_text_ends_in_one_line(tmp_path, mlflow_store):
    """A pattern the config check lets through (it backtracks on ``abab...!``, not on a run
    of one character) stops at its search bound, in one line naming it, well within 60 s."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "run.jsonl").write_text(session("run", "ab" * 3000 + "!"))
    args = [
        "transcript=files",
        f"transcript.path={folder}",
        "+redaction.patterns.pairs='((ab)+)+$'",
    ]
    started = time.monotonic()
    proc = run_benchmark([*args, "execution.progress=off"], tmp_path, ENV, timeout=60)
    assert time.monotonic() - started < 60
    assert proc.returncode == 2, proc.stderr[-2000:]
    one_error_line(proc.stderr, "redaction.patterns.pairs:", "rewrite it")


def test_a_user_pattern_still_redacts(tmp_path, mlflow_store):
    """Run by the ``regex`` engine, a user pattern's secret (its group ``s``) is replaced."""
    token = "tkt_" + "9f3a" * 8
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "run.jsonl").write_text(session("run", f"The ticket token is {token}."))
    args = [
        "transcript=files",
        f"transcript.path={folder}",
        "+redaction.patterns.ticket='(?P<s>tkt_[0-9a-f]{32})'",
        "compaction.context_window=160",
        "compaction.tail_tokens=10",
        "execution.progress=off",
    ]
    proc = run_benchmark(args, tmp_path, ENV, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert leaks(token, [tmp_path], proc.stdout, proc.stderr, skip=(folder,)) == []
    [manifest] = tmp_path.glob("mlruns/artifacts/*/artifacts/transcripts/manifest.json")
    assert json.loads(manifest.read_text())["files"][0]["redactions"] == {"ticket": 1}


def test_the_search_bound_names_the_pattern():
    from benchmark.errors import UserError
    from benchmark.redaction import Redactor
    from benchmark.redaction.detectors import USER_PATTERN_TIMEOUT_S

    redactor = Redactor([], {"pairs": "((ab)+)+$"})
    started = time.monotonic()
    with pytest.raises(UserError, match=r"^redaction\.patterns\.pairs: the pattern searched"):
        redactor.text("ab" * 3000 + "!")
    assert time.monotonic() - started < 4 * USER_PATTERN_TIMEOUT_S + 5
