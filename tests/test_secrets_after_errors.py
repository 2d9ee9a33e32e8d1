"""The issue's check under hostile input: secrets planted where no redaction of transcripts
reaches them (the command line, a skipped file's error, a server's error body) leave no
8-character piece of themselves in anything the jobs write, errors included.

Real jobs (``python -m benchmark``) run with their working directory in ``tmp_path``,
so ``mlruns/``, ``outputs/``, ``multirun/``, ``.cache/`` and the job logs all land
there; then every file under it is read as bytes (the SQLite store too).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import SMALL, run_benchmark
from openai_stub import Fault, scripted_reply

PEM_BODY = "Qm9Lq2Vz7Np4Rt9Wb3Mc6Df1Gh5Jk0Ls8Yt2Pq4ZwXx3Cv6Bn9Ma1Sd4Fg7Hj0Kl2Pz5Ox8Iu"
SECRETS = {
    "openai": "sk-proj-Zt4Wq9Lm2Xv7Rp3Kc8Bn1Df6Gh0Js5Ya2Ue7Io4",
    "github": "ghp_Lq7Vx2Mz9Rb4Tn8Wc1Yd6Fh3Jk0Ps5Ga2Ue7Zx",
    "github_role": "ghp_Rw3Kt8Yn1Qp6Vz2Mc9Lb4Xd7Hf0Js5Ge2Ua8Ti",
    "github_key": "ghp_Nc5Wz0Qr7Vm2Lt9Yb4Kx1Pd6Hf3Js8Ge5Ua2Oi",
    "aws": "AKIAZ7QX3M2KD9VNB4PW",
    "url_password": "Hx7qTz2Lp9vW",
    "bearer": "Yb3Kq9Lw2Vx8Np4Rt7Mz1Dc6",
    "private_key": PEM_BODY,
    "cli_password": "Tm6rWq1Zk8yP",
    "cli_key": "Vz2Lp9Xq4Rt7Wb3Mk",
    # The judge's key, read from a variable whose name says nothing (only its endpoint knows).
    "judge_key": "Jq8vT3nW6zR1kL5pX9cB2mY7",
}
ENV = {"NO_PROXY": "*", "BENCHJUDGE": SECRETS["judge_key"], "OPENAI_API_KEY": "unused-here"}
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
# Secrets whose only way out is an importer's error text: until the importers scrub before
# they cut (their own part of issue 14), a 36-character token shows 35 of its characters.
IMPORTER_ERRORS = {"github_role", "github_key"}


def _session() -> list[dict]:
    s = SECRETS
    return [
        {"role": "system", "content": "You are a coding agent."},
        {
            "role": "user",
            "content": f"Deploy with {s['openai']}; the DB is postgresql://app:"
            f"{s['url_password']}@db:5432/app.",
        },
        {
            "role": "assistant",
            "content": "Reading the credentials.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": {"command": "cat ~/.aws/creds"}},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": f"aws_access_key_id = {s['aws']}\n{PEM}\n"
            f'curl -H "Authorization: Bearer {s["bearer"]}" https://api.internal\n'
            f"git push https://x:{s['github']}@github.com/acme/app",
        },
        {"role": "assistant", "content": "Done; the deploy key is in place."},
    ]


def _write_transcripts(folder: Path) -> Path:
    folder.mkdir()
    lines = [json.dumps(m) for m in _session()]
    (folder / "good.jsonl").write_text("\n".join(lines) + "\n")
    # Skipped: a role no format knows, equal to a token; a record whose only key is a token.
    role = [{"role": "user", "content": "hi"}, {"role": SECRETS["github_role"], "content": "x"}]
    (folder / "bad_role.jsonl").write_text("\n".join(json.dumps(m) for m in role) + "\n")
    (folder / "bad_key.json").write_text(json.dumps({SECRETS["github_key"]: 1}))
    return folder


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return run_benchmark(args, cwd, {**os.environ, **ENV}, timeout=300)


def _leaks(root: Path, names: set[str]) -> list[str]:
    """(file, secret, piece) for every 8-character piece of a secret found under ``root``."""
    found = []
    files = [p for p in root.rglob("*") if p.is_file()]
    for name in sorted(names):
        secret = SECRETS[name]
        pieces = {secret[i : i + 8].encode() for i in range(len(secret) - 7)}
        for path in files:
            data = path.read_bytes()
            hit = next((p for p in pieces if p in data), None)
            if hit is not None:
                found.append(f"{path.relative_to(root)}: {name} ({hit.decode()!r})")
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The jobs' shared working directory, after all of them ran."""
    from openai_stub import OpenAIStub

    cwd = tmp_path_factory.mktemp("jobs")
    sessions = _write_transcripts(cwd.parent / f"{cwd.name}-sessions")
    s = SECRETS
    common = ["execution.progress=off", "execution.fail_on_error=1"]
    small = [o for o in SMALL if o not in ("tracking=disabled", "cache.dir=null")]
    results = []

    # One run over the folder: secrets in contents and tool outputs, two files skipped with
    # an error naming a token, a token as the run's name.
    results.append(
        _cli(
            [
                *common,
                "transcript=files",
                f"transcript.path={sessions}",
                "transcript.on_error=skip",
                "compaction.context_window=160",
                "compaction.tail_tokens=10",
                f"tracking.run_name={s['github']}",
            ],
            cwd,
        )
    )
    # A sweep of two, with a key as the run's name.
    results.append(
        _cli(
            [
                "-m",
                *common,
                *small,
                "policy=truncate,anchor_index",
                f"tracking.run_name={s['aws']}",
            ],
            cwd,
        )
    )
    # Refused: credentials in base_url and a key on the command line (Hydra saves both first).
    refused = _cli(
        [
            *common,
            *small,
            "judge=gpt4o",
            f"judge.endpoint.base_url=http://bob:{s['url_password']}@127.0.0.1:9/v1",
            f"+judge.endpoint.api_key={s['cli_key']}",
            f"+judge.endpoint.password={s['cli_password']}",
            # Its own folder: Hydra's default is named to the second, which the next job
            # (started within that second) would share and overwrite.
            "hydra.run.dir=outputs/refused/job",
        ],
        cwd,
    )
    assert refused.returncode == 2, refused.stderr[-2000:]
    # An LLM judge whose server answers with errors that echo the key and other secrets.
    with OpenAIStub() as stub:
        # Its good replies echo the key too (in the judge's reasoning), as a hostile server might.
        stub.reply = lambda body: scripted_reply(body).replace(
            "scripted", f"scripted {s['judge_key']}"
        )
        stub.queue(Fault.status(401, message=f"Incorrect API key provided: {s['judge_key']}"))
        body = f"upstream Authorization: Bearer {s['bearer']} via postgresql://u:{s['url_password']}@db"
        stub.queue(Fault.status(400, message=f"{body}\n{PEM}"), times=2)
        stub.queue(Fault.status(500, message=f"{s['openai']} rejected; {body}"), times=2)
        results.append(
            _cli(
                [
                    *common,
                    *small,
                    "judge=gpt4o",
                    f"judge.endpoint.base_url={stub.base_url}",
                    "judge.endpoint.api_key_env=BENCHJUDGE",
                    "++judge.endpoint.preflight=false",  # the queued faults are the job's
                    "judge.endpoint.max_retries=0",
                    "judge.endpoint.timeout_s=5",
                ],
                cwd,
            )
        )
        assert sum(stub.stats().faults.values()) == 5, "the faults were served"
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    return cwd


def test_the_jobs_wrote_everywhere(workdir):
    for folder in ("mlruns", "outputs", "multirun", ".cache/benchmark"):
        assert (workdir / folder).is_dir(), folder
    assert list(workdir.glob("outputs/*/*/*.log")) and list(workdir.glob("multirun/*/*/*/*.log"))
    assert list(workdir.glob("outputs/*/*/.hydra/overrides.yaml"))
    assert list(workdir.glob("multirun/*/*/multirun.yaml"))
    # The refused job's saved command line says where the secrets were, not what they are.
    overrides = "".join(p.read_text() for p in workdir.glob("outputs/*/*/.hydra/overrides.yaml"))
    assert "+judge.endpoint.api_key=<redacted>" in overrides
    assert "http://bob:[REDACTED:url_password#1]@127.0.0.1:9/v1" in overrides


def test_no_piece_of_a_secret_is_written(workdir):
    assert _leaks(workdir, set(SECRETS) - IMPORTER_ERRORS) == []


def test_no_piece_of_a_skipped_files_secret_is_written(workdir):
    assert _leaks(workdir, IMPORTER_ERRORS) == []


def test_a_message_is_scrubbed_before_it_is_cut():
    from benchmark.redaction import clip

    text = f"unknown role {SECRETS['github_role']!r} in line 2"
    assert clip(text, 43) == "unknown role '[REDACTED:github_token#1]'..."
    assert SECRETS["github_role"][:8] not in clip(text, 30)
    assert clip(f"first {SECRETS['openai']}\n{PEM}", 200, first_line=True) == (
        "first [REDACTED:openai_key#1]"
    )
    assert clip("short", 10) == "short"


def test_hydra_files_are_rewritten_only_when_they_hold_a_credential(tmp_path):
    from omegaconf import OmegaConf

    from benchmark.config.hydra_outputs import scrub_folder

    clean = "- policy=truncate\n- seed=3\n"
    (tmp_path / "clean.yaml").write_text(clean)
    (tmp_path / "config.yaml").write_text(
        f"judge:\n  endpoint:\n    base_url: https://{SECRETS['cli_key']}@h/v1\n"
        f"    api_key: {SECRETS['cli_password']}\n    api_key_env: BENCHJUDGE\n"
        f"tracking:\n  run_name: {SECRETS['aws']}\n"
    )
    assert scrub_folder(tmp_path) == [tmp_path / "config.yaml"]
    assert (tmp_path / "clean.yaml").read_text() == clean  # byte for byte
    assert OmegaConf.to_container(OmegaConf.load(tmp_path / "config.yaml")) == {
        "judge": {
            "endpoint": {
                "base_url": "https://[REDACTED:url_userinfo#1]@h/v1",
                "api_key": "<redacted>",
                "api_key_env": "BENCHJUDGE",
            }
        },
        "tracking": {"run_name": "[REDACTED:aws_access_key_id#1]"},
    }


def test_log_records_are_scrubbed_on_every_handler(tmp_path):
    import logging

    from benchmark.redaction.logs import scrub_handlers

    logger = logging.getLogger("test_secret_scan")
    handler = logging.FileHandler(tmp_path / "job.log")
    logger.addHandler(handler)
    try:
        scrub_handlers(logger)
        logger.warning("skipped %s: %s", "a.jsonl", f"token {SECRETS['github']}")
        try:
            raise ValueError(SECRETS["openai"])
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    logged = (tmp_path / "job.log").read_text()
    assert "skipped a.jsonl: token [REDACTED:github_token#1]" in logged
    assert "ValueError: [REDACTED:openai_key#1]" in logged
    assert _leaks(tmp_path, set(SECRETS)) == []
