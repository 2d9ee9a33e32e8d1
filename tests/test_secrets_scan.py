"""The issue's check: after real runs over secret-bearing transcripts, with keys set in the
environment, nothing a job leaves behind (mlruns/, multirun/, outputs/, the caches) holds
any planted secret, and no LLM request carried one.

The sessions plant one secret of every detector's type in the head, the compacted region
and the tail, in user and assistant text, tool outputs and tool-call arguments. The jobs
run the real CLI with a summarizing policy whose summarizer, answerer and judge are LLM
endpoints on the loopback stub, so the reply cache, traces and judge records all fill up.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from conftest import start_benchmark
from openai_stub import scripted_reply

from benchmark.redaction import BUILTIN_NAMES

# The keys the job's endpoints read: the judge and answerer use OPENAI_API_KEY, the summarizer
# a variable of its own. Neither matches a detector's format, so only `env_value` knows them.
ENV_KEYS = {
    "OPENAI_API_KEY": "planted-openai-9c1e7b3f5a2d4e6f8091",
    "BENCH_SUMMARIZER_KEY": "planted-summ-4f2a8c6e0b1d3f5a7c9e",
}
PEM_BODY = (
    "MIIEowIBAAKCAQEAq3JxZk9uVb2pL7tRw4Hs8GmYcD1eNf6oQa5iUj0KlXyZvTb3",
    "Wc9Ln2Rp4Ts6Vx8Zb0Df2Hj4Lm6Np8Rt0Vx2Zb4Df6Hj8Lm0Np2Rt4Vx6Zb8Df0H",
)
SECRETS = {
    "openai_key": "sk-proj-Qm3Xv8Lp2Rt6Wz9Ab4Cd7Ef1Gh5Jk0Mn3Pq8Rs2Tu6Vw9Yz4",
    "anthropic_key": "sk-ant-api03-Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7-Qq1Ww2Ee3Rr4",
    "aws_access_key_id": "AKIAQ7XZ3M2KD9VNB4PL",
    "aws_secret_key": "pX7vN2qL9rT4wZ8bC3dF6gH1jK5mQ0sU2yA4eI7o",
    "github_token": "ghp_T4k9Qz2Lm7Xv3Rp8Wn1Bc6Df0Gh5Jk2Ls9Yt4Pq",
    "slack_token": "xoxb-284619375024-5836102947316-Hq7Wd2Lx9Vb4Nm1Zk8Pc3Ry6",
    "google_api_key": "AIzaSyQ4x9Lm2Vb7Np3Rt8Wz1Kc6Dh0Gj5Fy2Hs9",
    "service_token": "glpat-Vb7Np3Rt8Wz1Kc6Dh0Gj5",
    "stripe_key": "sk_live_51Nq8Xv2Lm7Rt4Wz9Bc3Df6Gh",
    "huggingface_token": "hf_QmXvLpRtWzAbCdEfGhJkMnPqRsTuVwYzAbCd",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiaWxsaW5nLXN2YyIsInJvbGUiOiJhZG1pbiJ9."
    "Kx8Lq2Vz7Np4Rt9Wb3Mc6Df1Gh5Jk0Ls8Yt2Pq4Zw",
    "http_auth": "YmlsbGluZzpRdjdMcDJYejlNbjRSdDg=",
    "url_password": "Wq8!zLp3vRt7",
    "cli_secret": "Mysq1R00t!Pw9",
    "secret_assignment": "Dj4ng0-S3cr3t-Kx7Vq2",
    "private_key": "\n".join(PEM_BODY),
    "env_value": ENV_KEYS["BENCH_SUMMARIZER_KEY"],
}
assert set(SECRETS) == set(BUILTIN_NAMES)  # every detector is exercised

_FILLER = (
    "    def total(self, items: list[LineItem]) -> Decimal:\n"
    "        subtotal = sum((i.price * i.quantity for i in items), Decimal(0))\n"
    "        return (subtotal - self.discount(subtotal)).quantize(CENTS)\n"
)


def _call(call_id: str, name: str, **args: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def secret_session(tag: str) -> list[dict]:
    """A coding session with a secret of every type in head, region and tail."""
    s = SECRETS
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + s["private_key"] + "\n-----END RSA PRIVATE KEY-----"
    steps: list[tuple[str, dict, str]] = [
        (
            "Reading the environment first.",
            _call(f"{tag}1", "bash", command="cat .env"),
            f"OPENAI_API_KEY={s['openai_key']}\nSECRET_KEY={s['secret_assignment']}\n"
            f"DATABASE_URL=postgresql://billing:{s['url_password']}@db:5432/billing\nDEBUG=0\n",
        ),
        (
            "Checking the AWS profile the deploy uses.",
            _call(f"{tag}2", "bash", command="cat ~/.aws/credentials"),
            f"[default]\naws_access_key_id = {s['aws_access_key_id']}\n"
            f"aws_secret_access_key = {s['aws_secret_key']}\n",
        ),
        (
            "Writing the deploy key the CI job expects.",
            _call(f"{tag}3", "write_file", path="deploy/id_rsa", content=pem + "\n"),
            "wrote 1679 bytes to deploy/id_rsa",
        ),
        (
            "Calling the internal API to confirm the invoice totals.",
            _call(
                f"{tag}4",
                "bash",
                command=f'curl -s -H "Authorization: Basic {s["http_auth"]}" '
                "https://billing.internal/api/invoices/42",
            ),
            '{"id": 42, "total": "118.00"}',
        ),
        (
            "Running the tests.",
            _call(f"{tag}5", "bash", command="pytest tests/test_invoice.py -x"),
            "E   sqlalchemy.exc.OperationalError: could not connect to server: "
            f"postgresql://billing:{s['url_password']}@db:5432/billing\n"
            "FAILED tests/test_invoice.py::test_total_rounds_half_up\n1 failed, 11 passed",
        ),
        (
            f"The JWT {s['jwt']} in the fixtures has the admin role; I'll use a fresh one.",
            _call(
                f"{tag}6", "bash", command=f"mysql -u root -p{s['cli_secret']} billing < seed.sql"
            ),
            "Query OK, 12 rows affected",
        ),
        (
            "Pushing the branch.",
            _call(
                f"{tag}7",
                "bash",
                command=f"git push https://x-access-token:{s['github_token']}@github.com/acme/billing",
            ),
            f"remote: Slack notify via {s['slack_token']}\nTo github.com:acme/billing.git",
        ),
        (
            f"Model downloads use {s['huggingface_token']}; the summarizer key "
            "is in the environment too.",
            _call(f"{tag}8", "bash", command="printenv BENCH_SUMMARIZER_KEY"),
            s["env_value"],
        ),
    ]
    messages: list[dict] = [
        {"role": "system", "content": "You are a coding agent working in the billing repo."},
        {
            "role": "user",
            "content": f"Fix the failing invoice tests. Stripe is {s['stripe_key']}; "
            f"never commit it. The maps key is {s['google_api_key']}, the CI token "
            f"{s['service_token']}.",
        },
    ]
    for text, call, output in steps:
        messages.append({"role": "assistant", "content": text, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": call["id"], "content": output + "\n" + _FILLER * 6}
        )
    messages += [
        {"role": "user", "content": f"Also rotate {s['anthropic_key']}, it leaked."},
        {
            "role": "assistant",
            "content": f"Rotated {s['anthropic_key']} and {s['openai_key']}; "
            "tests pass now (12 passed).",
        },
    ]
    return messages


def distinctive(secret: str) -> list[str]:
    """The secret and pieces of it that could only come from it (12-character windows)."""
    pieces = {secret}
    for line in secret.splitlines():
        pieces |= {line[i : i + 12] for i in range(0, max(len(line) - 11, 1), 6)}
    return sorted(p for p in pieces if len(p) >= 12)


def leaks(root: Path, skip: Path) -> list[str]:
    """Every (file, planted piece) found in the raw bytes under ``root``."""
    needles = {
        name: [p.encode() for p in distinctive(v)] for name, v in {**SECRETS, **ENV_KEYS}.items()
    }
    found = []
    for path in root.rglob("*"):
        if not path.is_file() or skip in path.parents:
            continue
        data = path.read_bytes()
        for name, pieces in needles.items():
            hit = next((p for p in pieces if p in data), None)
            if hit is not None:
                found.append(f"{path.relative_to(root)}: {name} ({hit.decode()!r})")
    return found


def start_cli(args: list[str], cwd: Path) -> subprocess.Popen:
    """``python -m benchmark`` with the planted keys in its environment."""
    return start_benchmark(args, cwd, {**os.environ, "NO_PROXY": "*", **ENV_KEYS})


def stub_stages(base_url: str) -> list[str]:
    """Summarizer, answerer and judge on the stub; the summarizer reads its own key variable."""
    fast = {"base_url": base_url, "timeout_s": 5, "backoff_initial_s": 0.01, "max_retries": 2}
    overrides = ["summarizer=gpt4o", "answerer=gpt4o", "judge=gpt4o"]
    for stage in ("summarizer", "answerer", "judge"):
        overrides += [f"{stage}.endpoint.{k}={v}" for k, v in fast.items()]
    return [*overrides, "summarizer.endpoint.api_key_env=BENCH_SUMMARIZER_KEY"]


@pytest.fixture
def sessions(tmp_path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for tag in ("alpha", "beta"):
        lines = [json.dumps(m) for m in secret_session(tag)]
        (folder / f"{tag}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def window_for(sessions: Path) -> int:
    """A context window whose trigger the sessions pass only at their last message, so the
    head, the region and the tail all hold secrets (counted after redaction, as a job does)."""
    from benchmark.redaction import ENV_VALUE, Redactor
    from benchmark.transcript.formats import import_file

    redactor = Redactor(known={ENV_VALUE: ENV_KEYS.values()})
    totals = [
        redactor.transcript(import_file(p).transcript)[0].total_tokens
        for p in sessions.glob("*.jsonl")
    ]
    return math.ceil((min(totals) - 5) / 0.8)


def test_no_planted_secret_leaves_the_job(openai_stub, tmp_path, sessions, mlflow_store):
    openai_stub.reply = scripted_reply
    common = [
        "transcript=files",
        f"transcript.path={sessions}",
        f"compaction.context_window={window_for(sessions)}",
        "compaction.tail_tokens=200",
        "probe.per_type=2",
        "execution.progress=off",
        *stub_stages(openai_stub.base_url),
    ]
    from benchmark.tracking.mlflow_store import prepare_store

    # One job and a sweep of two, at once (they share the store, created here first, and
    # the caches, as jobs may).
    prepare_store(tmp_path / "mlruns", "compaction-benchmark")
    jobs = [
        start_cli([*common, "policy=anchored_iterative"], tmp_path),
        start_cli(["-m", *common, "policy=anchored_iterative,regenerative"], tmp_path),
    ]
    for job in jobs:
        out, err = job.communicate(timeout=300)
        assert job.returncode == 0, err[-3000:]
        assert not [n for n, v in SECRETS.items() if v in out + err]

    # Everything the jobs left behind: mlruns/ (SQLite store, artifacts, traces), multirun/,
    # outputs/ (Hydra's logs and configs), .cache/ (probe sets, LLM replies).
    cache = tmp_path / ".cache" / "benchmark"
    assert (cache / "llm_responses.sqlite").is_file() and list((cache / "probes").iterdir())
    for folder in ("mlruns", "multirun", "outputs"):
        assert (tmp_path / folder).is_dir(), folder
    assert leaks(tmp_path, skip=sessions) == []

    # No request the models received carried a secret; the keys only in the auth header.
    bodies = [json.dumps(r.body) for r in openai_stub.requests]
    assert len(bodies) > 20
    assert not [n for n, v in {**SECRETS, **ENV_KEYS}.items() if any(v in b for b in bodies)]
    assert any("[REDACTED:" in b for b in bodies)  # the models saw placeholders instead
    keys = {r.headers.get("Authorization") for r in openai_stub.requests}
    assert keys == {f"Bearer {v}" for v in ENV_KEYS.values()}

    _check_logged(tmp_path)


def _check_logged(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    from benchmark.tracking.sweep_parent import PARENT_TAG

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    every = client.search_runs([exp.experiment_id])
    runs = [r for r in every if PARENT_TAG not in r.data.tags]  # the jobs, not the sweep's parent
    assert len(runs) == 3 and len(every) == 4
    assert client.search_traces(locations=[exp.experiment_id])  # the scan covered traces too
    for run in runs:
        metrics = run.data.metrics
        # Two sessions, each with every type at least once.
        assert metrics["redactions/total"] >= 2 * len(SECRETS)
        assert {f"redactions/{t}" for t in SECRETS} <= set(metrics)
        assert metrics["probes/total"] > 0
        assert metrics["llm/summarizer/calls"] + metrics["llm/summarizer/cache_hits"] > 0
        artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
        assert "judge_records.jsonl" in artifacts
        contexts = client.download_artifacts(run.info.run_id, "contexts", str(tmp_path / "dl"))
        logged = "".join(p.read_text() for p in Path(contexts).rglob("*.json"))
        assert "[REDACTED:stripe_key#1]" in logged  # the head, kept verbatim, placeholder and all
        assert "[REDACTED:anthropic_key#1]" in logged  # the tail
        manifest = client.download_artifacts(
            run.info.run_id, "transcripts/manifest.json", str(tmp_path / "dl")
        )
        files = json.loads(Path(manifest).read_text())["files"]
        assert [set(f["redactions"]) for f in files] == [set(SECRETS)] * 2
