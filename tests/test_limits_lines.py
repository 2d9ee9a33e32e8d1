"""Sizes and limits, one-line errors, sweeps validated before any job, and file names that
look like globs.

Each bad command ends before any work with exit 2 and exactly one stderr line that starts
with ``error:`` and names the key, flag or sweep element, no traceback; a refused sweep
launches no job (no sweep folder, no store). Most cases run in-process through
``benchmark.__main__.main`` (Hydra composes for real each time); a few are real processes,
bounded by a 60 s timeout. Files named ``run[1].jsonl``, ``a b*?{x,y}ü.jsonl`` or
``-lead.jsonl`` are read as the files they are.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_benchmark

from benchmark.__main__ import main

LONG_KEY = "k" * 300
HUGE_INT = "9" * 4301
CHAT = REPO / "tests" / "fixtures" / "transcripts" / "chat" / "ledger_fix.jsonl"
# A file transcript small enough for a job of a second: a window it overflows.
FILES = ["transcript=files", "compaction.context_window=600", "compaction.tail_tokens=100"]
GPT = "judge=gpt4o"


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


# (command line, what the one line must contain)
SIZE_CASES: list[tuple[list[str], str]] = [
    ([f"+{LONG_KEY}=1"], "key too long (at most 250"),
    ([f"+policy.{LONG_KEY}=1"], "key too long"),
    ([f"seed={HUGE_INT}"], "config key 'seed': a number of more than 4,300 digits"),
    ([f"transcript.sessions={HUGE_INT}"], "config key 'transcript.sessions'"),
    (["-m", f"seed=1,{HUGE_INT}"], "config key 'seed'"),
    (["seed=1e400"], "config key 'seed': must be a finite number"),
    (["seed=nan"], "config key 'seed': must be a finite number"),
    ([f"seed={2**63}"], "config key 'seed'"),
    (["+policy.x=1e300"], "config key 'policy.x': number too large"),
    ([f"+policy.x={10**30}"], "config key 'policy.x': number too large"),
    (["tracking.experiment=" + "e" * 501], "'tracking.experiment': must be at most 256"),
    (["tracking.run_name=" + "r" * 501], "'tracking.run_name': must be at most 250"),
    (["tracking.run_name=" + "r" * 60_000], "'tracking.run_name': text of 60,000 characters"),
    (["+policy.note=" + "x" * 200_000], "config key 'policy.note': value of 200,013"),
    ([f"+policy.x={nested(3000)}"], "config key 'policy.x': value nested too deeply"),
    ([f"+policy.x={nested(25)}"], "'policy.x': value nested too deeply (at most 20"),
    ([f"+policy.x={nested(19)}"], "0.0.0.0.0': nested too deeply (at most 20 levels)"),
    (["+policy.x=" + "{a:" * 19 + "1" + "}" * 19], "'policy.x.a.a.a.a.a.a.a.a.a.a.a.a.a.a"),
    (["+policy.x=[" + ",".join(["1"] * 20_000) + "]"], "'policy.x': more than 1,000 entries"),
    (["+audit=judge", "audit.samples=100000"], "'audit.samples': must be <= 100 "),
    (["+audit=judge", "audit.sessions=5000"], "'audit.sessions': must be <= 1,000"),
    (["+audit=judge", "audit.target_tokens=10000000"], "'audit.target_tokens': must be <="),
    (["transcript.target_tokens=99999999"], "'transcript.target_tokens': must be <= 2,000,000"),
    (["transcript.sessions=100000"], "'transcript.sessions': must be <= 1,000"),
    (["probe.per_type=1000000"], "'probe.per_type': must be <= 10,000"),
    (["compaction.context_window=1000000000000"], "'compaction.context_window': must be <="),
    (["compaction.tail_tokens=1000000000000"], "'compaction.tail_tokens': must be <="),
    (["execution.max_probes_in_flight=1000000000"], "'execution.max_probes_in_flight'"),
    ([GPT, "judge.endpoint.max_retries=1000000"], "'judge.endpoint.max_retries': must be <="),
    ([GPT, "judge.endpoint.timeout_s=1e9"], "'judge.endpoint.timeout_s': must be <="),
    ([GPT, "judge.endpoint.price_input_per_1m=1e9"], "'judge.endpoint.price_input_per_1m'"),
    (["policy=truncate", "policy.recent_tokens=1000000000000"], "'policy.recent_tokens'"),
    (["policy=observation_mask", "policy.keep_last=1000000000"], "'policy.keep_last'"),
    (["judge.max_answer_tokens=1000000000000"], "'judge.max_answer_tokens': must be <="),
    (["answerer.k1=1e9"], "'answerer.k1'"),
    (["rubric.dimensions.accuracy.accuracy_factual=1e9"], "accuracy_factual' must be >= 0"),
]
LINE_CASES: list[tuple[list[str], str]] = [
    (["tracking.run_name='a\nb'"], "'tracking.run_name': a name must be printable"),
    (["tracking.experiment='\x1b[31mred'"], "'tracking.experiment': a name must be printable"),
    (["tracking.run_name=a\tb"], "'tracking.run_name'"),
    (["policy=a\tb"], "unknown policy"),
    (["policy=\x1b[2Jx"], "policy=\\x1b[2Jx"),
    (["+a\nb=1"], "cannot parse the override"),
    (["transcript.name='x\ry'", "transcript.sessions=0"], "'transcript.name': a name must"),
    (["--cfg", "jobb"], "argument --cfg/-c: invalid choice: 'jobb'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["policy=none", "-m", "seed=1"], "flags such as -m go before the overrides"),
    (["transcript.path=run[1].jsonl", "transcript=files"], "quote a value"),
]
HYDRA_CASES: list[tuple[list[str], str]] = [
    (["hydra.launcher=5"], "config key 'hydra.launcher'"),
    (["-m", "hydra.launcher=5", "policy=none"], "config key 'hydra.launcher'"),
    (["-m", "hydra.launcher=null", "policy=none"], "config key 'hydra.launcher'"),
    (["-m", "hydra/launcher=nope", "policy=none"], "hydra/launcher/nope"),
    (["-m", "hydra.sweeper=[]", "policy=none"], "'hydra.sweeper'"),
    (["hydra.verbose=5"], "config key 'hydra.verbose'"),
    (["-m", "hydra.sweeper.max_batch_size=0", "policy=none"], "max_batch_size"),
    (["-m", "hydra.launcher._target_=nope", "policy=none"], "'hydra.launcher._target_'"),
    (["-m", "hydra.sweeper._target_=builtins.dict", "policy=none"], "not a Hydra sweeper"),
    (["hydra.job_logging.root.level=NOPE"], "hydra.job_logging.root.level=NOPE"),
    (["hydra.hydra_logging.version=7"], "hydra.hydra_logging.version=7"),
    (["hydra.callbacks.jobs._target_=nope"], "hydra.callbacks.jobs._target_=nope"),
    (["hydra.callbacks.x=5"], "hydra.callbacks.x"),
]
# Sweeps whose later element is bad: refused before the first job runs.
SWEEP_CASES: list[tuple[list[str], str]] = [
    (["policy=none,zzz"], "unknown policy 'zzz'"),
    (["compaction.context_window=300000,-5"], "sweep job compaction.context_window=-5:"),
    (["policy=none,truncate", "+policy.recent_tokens=5"], "sweep job policy=none:"),
    (["policy=none,opaque"], "sweep job policy=opaque: policy 'opaque'"),
    (["seed=1,abc"], "sweep job seed=abc: config key 'seed'"),
    (["transcript.sessions=1,2,100000"], "sweep job transcript.sessions=100000"),
    (["policy=glob(zzz*)"], "the sweep 'policy=glob(zzz*)' lists no value"),
    (["policy='glob(zzz*)'"], "unknown policy"),  # quoted: a name, not a glob
    (["policy=glob(zzz*)", "seed=1,2"], "lists no value (options: aggressive"),
    (["rubric.dimensions.accuracy.accuracy_factual=1,-1"], "accuracy_factual=-1"),
    (["policy=truncate", "policy.recent_tokens=100,1000000000000"], "recent_tokens=1000000000000"),
    (["policy=none,truncate", "tracking.run_name=ok,'a\nb'"], "a name must be printable"),
    (["judge=reference,gpt4o", "judge.max_answer_tokens=10"], "sweep job judge=gpt4o"),
    (
        ["hydra/sweeper=optuna", "policy=truncate", "policy.recent_tokens=interval(-5,100)"],
        "policy.recent_tokens",
    ),
]
CASES = SIZE_CASES + LINE_CASES + HYDRA_CASES
# A handful as the user meets them: real processes, a real (fresh) Hydra each.
SUBPROCESS = [
    [f"seed={HUGE_INT}"],
    [f"+{LONG_KEY}=1"],
    ["-m", "hydra.launcher=5", "policy=none"],
    ["hydra.verbose=5"],
]


def _args(case: list[str], tmp_path: Path) -> list[str]:
    """The case's command line (its leading flags first), every folder the job could write
    under tmp_path."""
    given = list(case)
    base = [
        f"hydra.run.dir={tmp_path / 'outputs'}",
        f"hydra.sweep.dir={tmp_path / 'multirun'}",
        f"cache.dir={tmp_path / 'cache'}",
        "tracking=mlflow",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        "execution.progress=off",
    ]
    keys = {a.lstrip("+~").split("=", 1)[0] for a in given}
    flags = []
    while given and given[0].startswith("-"):
        flags.append(given.pop(0))
        if flags[-1] == "--cfg":
            flags.append(given.pop(0))
    return [*flags, *(b for b in base if b.split("=", 1)[0] not in keys), *given]


def _one_error_line(stderr: str, expected: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: "), lines[0]
    assert expected in lines[0], lines[0]
    assert not any(c in lines[0] for c in "\r\t\x1b\x07"), repr(lines[0])
    assert len(lines[0]) < 2000, lines[0][:300]  # never the 100 KB value itself
    return lines[0]


def _main(argv: list[str], monkeypatch) -> int:
    monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


def _ids(cases: list[tuple[list[str], str]]) -> list[str]:
    return [" ".join(c)[:60].encode("unicode_escape").decode() for c, _ in cases]


def test_the_battery_is_large():
    everything = CASES + SWEEP_CASES
    assert len(everything) >= 60
    assert len({" ".join(c) for c, _ in everything}) == len(everything)


@pytest.mark.parametrize(("case", "expected"), CASES, ids=_ids(CASES))
def test_bad_command_is_one_line_and_exit_2(case, expected, offline, monkeypatch, capsys):
    code = _main(_args(case, offline), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    _one_error_line(err, expected)
    assert not (offline / "mlruns").exists()  # failed before the store was touched
    assert not (offline / "multirun").exists()
    assert "HYDRA_FULL_ERROR" not in os.environ


@pytest.mark.parametrize(("case", "expected"), SWEEP_CASES, ids=_ids(SWEEP_CASES))
def test_bad_sweep_element_stops_it_before_any_job(case, expected, offline, monkeypatch, capsys):
    code = _main(_args(["-m", *case], offline), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    _one_error_line(err, expected)
    assert "Scorecard" not in out  # no job ran
    assert not (offline / "mlruns").exists()  # no store, so no run in one
    assert not (offline / "multirun").exists()  # no sweep folder: nothing launched


def test_a_good_sweep_still_runs_every_job(offline, monkeypatch, capsys):
    args = ["-m", "policy=none,truncate", "transcript.sessions=1", "transcript.target_tokens=30000"]
    args += ["compaction.context_window=16000", "compaction.tail_tokens=2500", "tracking=disabled"]
    args += ["cache.dir=null", "report.auto=false"]
    code = _main(_args(args, offline), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    assert "Scorecard: policy=none" in out and "Scorecard: policy=truncate" in out


# --- names that look like globs ----------------------------------------------------------

ODD_NAMES = ["run[1].jsonl", "a b*?{x,y}ü.jsonl", "-lead.jsonl", "q?.jsonl", "star*.jsonl"]


@pytest.fixture
def odd_files(tmp_path) -> Path:
    """A folder of copies of one chat transcript under names that hold glob characters."""
    folder = tmp_path / "logs[2]"
    folder.mkdir()
    for name in ODD_NAMES:
        shutil.copyfile(CHAT, folder / name)
    return folder


def _good_run(argv: list[str], monkeypatch, capsys) -> str:
    code = _main(argv, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    assert "Scorecard" in out
    return out


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_file_named_like_a_glob_is_read(name, odd_files, offline, monkeypatch, capsys):
    path = str(odd_files / name).replace("'", "\\'")
    argv = _args([*FILES, "tracking=disabled", f"transcript.path='{path}'"], offline)
    out = _good_run(argv, monkeypatch, capsys)
    assert "loaded 1 transcript(s)" in out


def test_a_glob_inside_a_folder_named_like_a_glob(odd_files, offline, monkeypatch, capsys):
    argv = _args(
        [*FILES, "tracking=disabled", f"transcript.path='{odd_files}/run*.jsonl'"], offline
    )
    out = _good_run(argv, monkeypatch, capsys)
    assert "loaded 1 transcript(s)" in out


def test_a_folder_of_odd_names_is_scanned(odd_files, offline, monkeypatch, capsys):
    argv = _args([*FILES, "tracking=disabled", f"transcript.path='{odd_files}'"], offline)
    out = _good_run(argv, monkeypatch, capsys)
    assert f"loaded {len(ODD_NAMES)} transcript(s)" in out


def test_a_missing_name_with_brackets_matches_nothing(odd_files, offline, monkeypatch, capsys):
    argv = _args(
        [*FILES, "tracking=disabled", f"transcript.path='{odd_files}/run[9].jsonl'"], offline
    )
    code = _main(argv, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2
    _one_error_line(err, "matches no file")


# --- real processes -------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}


@pytest.mark.parametrize("case", SUBPROCESS, ids=[c[-1][:30] for c in SUBPROCESS])
def test_bad_command_in_a_real_process(case, tmp_path):
    expected = dict((" ".join(c), e) for c, e in CASES)[" ".join(case)]
    proc = run_benchmark(_args(case, tmp_path), tmp_path, _env(), timeout=60)
    assert proc.returncode == 2, proc.stderr[-3000:]
    _one_error_line(proc.stderr, expected)
    assert not (tmp_path / "mlruns").exists()


def test_bad_sweep_element_in_a_real_process_leaves_no_run(tmp_path):
    case = ["-m", "policy=none,truncate", "compaction.context_window=300000,-5"]
    proc = run_benchmark(_args(case, tmp_path), tmp_path, _env(), timeout=60)
    assert proc.returncode == 2, proc.stderr[-3000:]
    _one_error_line(proc.stderr, "compaction.context_window=-5")
    assert not (tmp_path / "mlruns").exists() and not (tmp_path / "multirun").exists()


def test_bracket_file_makes_a_finished_run_in_a_real_process(odd_files, tmp_path, mlflow_store):
    from mlflow import MlflowClient

    case = [*FILES, f"transcript.path='{odd_files / 'run[1].jsonl'}'"]
    proc = run_benchmark(_args(case, tmp_path), tmp_path, _env(), timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert [r.info.status for r in runs] == ["FINISHED"]
    assert runs[0].data.params["transcript.path"].endswith("run[1].jsonl")
