"""Secrets where no transcript's redaction reaches them: in a transcript file's or folder's
name, in config strings that name things (the experiment, the run, the store, the caches,
Hydra's folders), in what a skipped file holds, in what ``--cfg``/``--info``/``--help``
print, and in the one error line. Each case plants a secret of its own (of several shapes:
``sk-proj-``, ``ghp_``, ``AKIA``, ``xoxb-``, ``hf_``, a JWT, an environment key), glued to
``_``, ``-`` or ``.`` as file names glue them, runs the real job (``python -m benchmark`` in
a subprocess, or ``main()`` in-process with real Hydra composition) and finds no
8-character piece of it in any file the job wrote (the MLflow SQLite store's bytes
included), nor on stdout or stderr.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import sys
from pathlib import Path

import pytest
from conftest import run_benchmark

from benchmark.__main__ import main

_RNG = random.Random(28)


def _alnum(n: int, chars: str = string.ascii_letters + string.digits) -> str:
    """Random characters with upper case, lower case and digits all present (a key's look)."""
    while True:
        text = "".join(_RNG.choice(chars) for _ in range(n))
        if chars != string.ascii_letters + string.digits:
            return text
        if all(any(test(c) for c in text) for test in (str.isupper, str.islower, str.isdigit)):
            return text


def openai() -> str:
    return "sk-proj-" + _alnum(40)


def github() -> str:
    return "ghp_" + _alnum(36)


def aws() -> str:
    return "AKIA" + _alnum(16, string.ascii_uppercase + string.digits)


def slack() -> str:
    return f"xoxb-{_alnum(12, string.digits)}-{_alnum(13, string.digits)}-{_alnum(24)}"


def huggingface() -> str:
    return "hf_" + _alnum(34)


def jwt() -> str:
    return f"eyJ{_alnum(20)}.eyJ{_alnum(30)}.{_alnum(32)}"


def plain() -> str:
    """A key of no known shape (only where it is known: an environment key, a file's text)."""
    return _alnum(24)


def pieces(secret: str) -> set[str]:
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def leaks(secret: str, roots: list[Path], *texts: str, skip: tuple[Path, ...] = ()) -> list[str]:
    """Where an 8-character piece of ``secret`` is: files under ``roots`` (bytes), texts."""
    needles = pieces(secret)
    found = [f"text {i}" for i, text in enumerate(texts) if any(p in text for p in needles)]
    encoded = [p.encode() for p in needles]
    for root in roots:
        for path in [root] if root.is_file() else root.rglob("*"):
            if not path.is_file() or any(s == path or s in path.parents for s in skip):
                continue
            data = path.read_bytes()
            if any(p in data for p in encoded):
                found.append(str(path))
    return found


def one_error_line(stderr: str, *expected: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip() and " INFO " not in line]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), lines[0]
    for part in expected:
        assert part in lines[0], lines[0]
    return lines[0]


def session(tag: str, extra: str = "") -> str:
    """A short chat session (JSON Lines) that compacts with ``WINDOW``."""
    call = {"id": f"{tag}1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the failing test in {tag}/billing.py. {extra}"},
        {"role": "assistant", "content": "Running the tests.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": f"{tag}1",
            "content": "FAILED tests/test_billing.py::test_total - AssertionError\n" * 12,
        },
        {"role": "assistant", "content": f"Fixed {tag}/billing.py; the tests pass now."},
    ]
    return "\n".join(json.dumps(m) for m in messages) + "\n"


WINDOW = ["compaction.context_window=160", "compaction.tail_tokens=10"]
QUICK = ["execution.progress=off", "probe.per_type=1"]
ENV_KEY = plain()  # BENCH_DEPLOY_TOKEN's value: known only as an environment key
ENV = {**os.environ, "NO_PROXY": "*", "BENCH_DEPLOY_TOKEN": ENV_KEY}
ENV.pop("HYDRA_FULL_ERROR", None)


# --- keys in file and folder names, and what skipped files hold: one job over a folder ----

# case -> (file name with {k} for the key, the key)
NAMED = {
    "openai_bare": ("{k}.jsonl", openai()),
    "github_after_underscore": ("run_{k}.jsonl", github()),
    "aws_after_underscore": ("x_{k}.traj", aws()),
    "aws_before_underscore": ("{k}_prod.jsonl", aws()),
    "slack_after_dash": ("sess-{k}.jsonl", slack()),
    "huggingface_before_underscore": ("{k}_run.ndjson", huggingface()),
    "jwt_after_dot": ("trace.{k}.json", jwt()),
    "environment_key_glued": ("deploy_{k}.jsonl", ENV_KEY),
    "github_twin_a": ("twin_{k}.jsonl", github()),
    "github_twin_b": ("twin_{k}.jsonl", github()),
}
FOLDER_KEY = github()  # a folder's name
LINKED_KEY = plain()  # the first line of a system-like file a link in the folder points to
ROLE_KEY = plain()  # an unknown role's value in a skipped file
SIDE_KEY = plain()  # the only key of a JSON file that is no session
SKIPPED_NAME_KEY = openai()  # the name of a file that is skipped
SKIPPED = {
    "linked_system_file": LINKED_KEY,
    "unknown_role": ROLE_KEY,
    "side_file_key": SIDE_KEY,
    "skipped_file_name": SKIPPED_NAME_KEY,
}


@pytest.fixture(scope="module")
def scanned(tmp_path_factory, migrated_db):
    """One job over a folder whose file and folder names hold keys, with files it skips."""
    cwd = tmp_path_factory.mktemp("scan")
    (cwd / "mlruns").mkdir()
    shutil.copyfile(migrated_db, cwd / "mlruns" / migrated_db.name)
    folder = cwd.parent / f"{cwd.name}-sessions"
    folder.mkdir()
    for case, (name, key) in NAMED.items():
        (folder / name.format(k=key)).write_text(session(case))
    inner = folder / f"team_{FOLDER_KEY}"
    inner.mkdir()
    (inner / "inner.jsonl").write_text(session("inner"))
    system = cwd.parent / f"{cwd.name}-passwd"
    system.write_text(f"root:{LINKED_KEY}:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n")
    (folder / "linked.jsonl").symlink_to(system)
    role = [{"role": "user", "content": "hi"}, {"role": ROLE_KEY, "content": "x"}]
    (folder / "badrole.jsonl").write_text("\n".join(json.dumps(m) for m in role) + "\n")
    (folder / "side.json").write_text(json.dumps({SIDE_KEY: 1}))
    (folder / f"bad_{SKIPPED_NAME_KEY}.jsonl").write_text("{not json\n")
    args = ["transcript=files", f"transcript.path={folder}", "transcript.on_error=skip"]
    proc = run_benchmark([*args, *WINDOW, *QUICK], cwd, ENV, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return cwd, folder, proc


def _manifest(cwd: Path) -> dict:
    [path] = cwd.glob("mlruns/artifacts/*/artifacts/transcripts/manifest.json")
    return json.loads(path.read_text())


@pytest.mark.parametrize("case", sorted(NAMED))
def test_a_key_in_a_transcript_files_name_is_nowhere(scanned, case):
    cwd, folder, proc = scanned
    key = NAMED[case][1]
    assert leaks(key, [cwd], proc.stdout, proc.stderr) == []


def test_a_key_in_a_folders_name_is_nowhere(scanned):
    cwd, folder, proc = scanned
    assert leaks(FOLDER_KEY, [cwd], proc.stdout, proc.stderr) == []
    assert (folder / f"team_{FOLDER_KEY}").is_dir()  # the user's own folder stays as named


@pytest.mark.parametrize("case", sorted(SKIPPED))
def test_a_skipped_files_content_and_name_are_nowhere(scanned, case):
    cwd, folder, proc = scanned
    assert leaks(SKIPPED[case], [cwd], proc.stdout, proc.stderr) == []


def test_ids_from_names_say_which_key_went_and_stay_distinct(scanned):
    cwd, folder, proc = scanned
    manifest = _manifest(cwd)
    ids = sorted(f["transcript_id"] for f in manifest["files"])
    assert len(ids) == len(set(ids)) == len(NAMED) + 1
    assert "run_REDACTED-github_token" in ids and "REDACTED-openai_key" in ids
    assert "x_REDACTED-aws_access_key_id" in ids and "trace.REDACTED-jwt" in ids
    assert "deploy_REDACTED-env_value" in ids and "inner" in ids
    assert sum(i.startswith("twin_REDACTED-github_token-") for i in ids) == 2
    # Contexts are stored per transcript id: the folder names are the clean ids too.
    contexts = {p.name for p in cwd.glob("mlruns/artifacts/*/artifacts/contexts/*")}
    assert contexts == set(ids)


def test_skip_reasons_say_the_kind_of_problem_only(scanned):
    cwd, folder, proc = scanned
    reasons = {Path(s["path"]).name: s["error"] for s in _manifest(cwd)["skipped"]}
    assert reasons["linked.jsonl"] == "not JSON or JSON Lines (starts with …)"
    assert reasons["badrole.jsonl"].endswith("(got …)")
    assert "first record's keys: …" in reasons["side.json"]
    assert "bad_[REDACTED:openai_key#1].jsonl" in reasons  # the path shown is scrubbed


# --- keys in config strings ---------------------------------------------------------------


@pytest.fixture
def offline(offline, monkeypatch):
    """conftest's ``offline``, with one key planted in the environment."""
    monkeypatch.setenv("BENCH_DEPLOY_TOKEN", ENV_KEY)
    return offline


SMALL = [
    "transcript.sessions=1",
    "transcript.target_tokens=6000",
    "compaction.context_window=4000",
    "compaction.tail_tokens=500",
    "probe.per_type=1",
    "execution.progress=off",
]


def run_main(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """``python -m benchmark *argv`` in this process: exit code, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


REFUSED = {
    "experiment_bare_openai": ("tracking.experiment", "{k}", openai()),
    "experiment_glued_github": ("tracking.experiment", "team_{k}", github()),
    "experiment_dotted_jwt": ("tracking.experiment", "exp.{k}", jwt()),
    "experiment_environment_key": ("tracking.experiment", "exp-{k}", ENV_KEY),
    "store_dir_glued_aws": ("tracking.store_dir", "store_{k}", aws()),
    "store_dir_folder_slack": ("tracking.store_dir", "{k}/mlruns", slack()),
    "uri_sqlite_huggingface": ("tracking.uri", "sqlite:///db_{k}.db", huggingface()),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_key_naming_the_store_or_experiment_is_refused(case, offline, monkeypatch, capsys):
    key_name, template, key = REFUSED[case]
    value = template.format(k=key)
    if key_name == "tracking.uri":  # the server group has a uri; the default store has none
        argv = ["tracking=server", f"{key_name}={value}"]
    else:
        argv = [f"{key_name}={value}"]
    code, out, err = run_main([*argv, *SMALL], monkeypatch, capsys)
    assert code == 2, err
    one_error_line(err, f"'{key_name}'", "looks like it holds a secret")
    assert leaks(key, [offline], out, err) == []
    assert not list(offline.rglob("mlflow.db"))


def test_keys_in_run_name_cache_and_output_folders_stay_out_of_files(
    offline, mlflow_store, monkeypatch, capsys
):
    """A run name, a cache folder and Hydra's run folder holding keys: the job runs, the
    folders are made as named, and no file (the store's bytes included) holds a key."""
    run_name, cache_key, run_dir_key = github(), slack(), huggingface()
    cache = offline / f"cache_{cache_key}"
    argv = [
        f"tracking.run_name=nightly_{run_name}",
        f"cache.dir={cache}",
        f"hydra.run.dir=outputs/run_{run_dir_key}",
        *SMALL,
    ]
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 0, err
    assert cache.is_dir() and (offline / "outputs" / f"run_{run_dir_key}").is_dir()
    assert list(mlflow_store.glob("artifacts/*/artifacts/scorecard.txt"))
    for key in (run_name, cache_key, run_dir_key):
        assert leaks(key, [offline], out, err) == [], key


# --- error lines ---------------------------------------------------------------------------

ERRORS = {
    "bad_value_echoed": (["seed={k}"], "'seed'", openai()),
    "unknown_option_echoed": (["policy={k}"], "unknown policy", github()),
    "unknown_key_named": (["+extra_{k}=1"], "unknown key", aws()),
    "unknown_detector": (["redaction.builtin=[{k}]"], "redaction.builtin", slack()),
    "pattern_type_name": (["+redaction.patterns.x_{k}=abc"], "redaction.patterns", github()),
    "endpoint_value": (["judge=gpt4o", "judge.endpoint.timeout_s={k}"], "timeout_s", openai()),
    "api_key_beside_bad_key": (
        ["judge=gpt4o", "+judge.endpoint.api_key={k}", "judge.endpoint.max_retries=-1"],
        "max_retries",
        plain(),
    ),
    "transcript_path": (["transcript=files", "transcript.path=/nonexistent/{k}"], "path", aws()),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_an_error_line_holds_no_key(case, offline, monkeypatch, capsys):
    overrides, expected, key = ERRORS[case]
    argv = [o.format(k=key) for o in overrides]
    small = ["execution.progress=off"] if "transcript=files" in argv else SMALL
    code, out, err = run_main([*argv, *small], monkeypatch, capsys)
    assert code == 2, err
    one_error_line(err, expected)
    assert leaks(key, [offline], out, err) == []
