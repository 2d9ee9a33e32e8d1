"""A battery of bad command lines: each ends before any work with exit 2 and exactly one
line on stderr that starts with ``error:`` and names the key or option, no traceback.

Most run in-process through ``benchmark.__main__.main`` (Hydra composes for real each
time); a handful run as real subprocesses, bounded by a 60 s timeout.
"""

from __future__ import annotations

import os
import sys

import pytest
from conftest import compose_config, run_benchmark

from benchmark.__main__ import hydra_main, main

SECRET = "sekr1tPassw0rdXYZ"
GPT = "judge=gpt4o"
FILES = ["transcript=files", "transcript.path=sessions"]

# (overrides, what the one line must contain); {file} stands for a regular file.
# Hydra itself refuses these while composing: they run through main().
COMPOSITION_CASES: list[tuple[list[str], str]] = [
    # misspelled keys and unknown options: the closest valid name
    (["polcy=x"], "did you mean 'policy'"),
    (["compaction.context_windw=1"], "did you mean 'context_window'"),
    (["policy.recent_tokns=1"], "policy.recent_tokns"),
    (["policy=truncate", "policy.recent_tokns=1"], "did you mean 'recent_tokens'"),
    (["policy=truncate", "+policy.recent_tokns=1"], "did you mean 'recent_tokens'"),
    ([GPT, "+judge.endpoint.modle=x"], "did you mean 'model'"),
    (["+judge.endpoint.modle=x"], "did you mean 'model'"),
    (["+judge.endpont.model=x"], "unknown option 'endpont'"),
    (["sed=1"], "did you mean 'seed'"),
    (["objectve=overall"], "did you mean 'objective'"),
    (["cache.dri=x"], "did you mean 'dir'"),
    (["execution.progres=bar"], "did you mean 'progress'"),
    (["tracking.store_dri=x"], "did you mean 'store_dir'"),
    (["transcript.sesions=2"], "did you mean 'sessions'"),
    (["probe.per_typ=2"], "did you mean 'per_type'"),
    (["rubric.scale=5"], "did you mean 'scale_max'"),
    (["redaction.enable=false"], "did you mean 'enabled'"),
    (["+compaction.extra=1"], "config key 'compaction.extra': unknown key"),
    (["+tracking.colour=red"], "config key 'tracking.colour': unknown key"),
    (["+execution.progess=bar"], "did you mean 'progress'"),
    (["~nokey"], "config key 'nokey'"),
    (["+seed=3"], "config key 'seed'"),
    (["policy=agressive"], "unknown policy 'agressive'"),
    (["judge=gpt5"], "unknown judge 'gpt5'"),
    (["transcript=file"], "unknown transcript 'file'"),
    (["rubric=nope"], "unknown rubric 'nope'"),
    (["probe=nope"], "unknown probe 'nope'"),
    (["summarizer=nope"], "unknown summarizer 'nope'"),
    (["answerer=nope"], "unknown answerer 'nope'"),
    (["tracking=nope"], "unknown tracking 'nope'"),
    (["policy=["], "policy=["),
    (["seed=1,2"], "config key 'seed'"),
    (["compaction=5"], "config key 'compaction'"),
    (["rubric.dimensions.accuracy=[1]"], "'rubric.dimensions.accuracy'"),
    (["hydra.run.dir=/proc/benchmark"], "'hydra.run.dir'"),
    (["hydra.run.dir={file}/sub"], "'hydra.run.dir'"),
    (["-m", "hydra.sweep.dir={file}/sub", "policy=none"], "'hydra.sweep.dir'"),
]
# These compose; the job refuses them (benchmark.config.schema, the parts): to save a second
# composition, the composed config is handed to the job function itself.
VALUE_CASES: list[tuple[list[str], str]] = [
    (["seed=${oops}"], "oops"),
    # every endpoint field
    ([GPT, "judge.endpoint.max_concurrency=0"], "'judge.endpoint.max_concurrency': must be > 0"),
    ([GPT, "judge.endpoint.timeout_s=0"], "'judge.endpoint.timeout_s': must be > 0"),
    ([GPT, "judge.endpoint.max_retries=-1"], "'judge.endpoint.max_retries': must be >= 0"),
    ([GPT, "judge.endpoint.temperature=nan"], "'judge.endpoint.temperature': must be a finite"),
    ([GPT, "judge.endpoint.temperature=inf"], "'judge.endpoint.temperature': must be a finite"),
    ([GPT, "judge.endpoint.temperature=3"], "'judge.endpoint.temperature': must be <= 2"),
    ([GPT, "judge.endpoint.structured_output=xml"], "'judge.endpoint.structured_output'"),
    ([GPT, "judge.endpoint.max_tokens=0"], "'judge.endpoint.max_tokens'"),
    ([GPT, "judge.endpoint.max_tokens=abc"], "'judge.endpoint.max_tokens'"),
    ([GPT, "judge.endpoint.price_input_per_1m=-1"], "'judge.endpoint.price_input_per_1m'"),
    ([GPT, "judge.endpoint.backoff_initial_s=0"], "'judge.endpoint.backoff_initial_s'"),
    ([GPT, "judge.endpoint.backoff_max_s=-inf"], "'judge.endpoint.backoff_max_s'"),
    ([GPT, "judge.endpoint.model=''"], "'judge.endpoint.model': must not be empty"),
    ([GPT, "judge.endpoint.api_key_env=''"], "'judge.endpoint.api_key_env'"),
    ([GPT, "judge.endpoint.max_retries=1.5"], "'judge.endpoint.max_retries'"),
    ([GPT, f"judge.endpoint.max_concurrency={10**30}"], "'judge.endpoint.max_concurrency'"),
    ([GPT, "judge.endpoint.timeout_s=1e300"], "'judge.endpoint.timeout_s'"),
    ([GPT, "judge.endpoint.max_concurrency=[1,2]"], "'judge.endpoint.max_concurrency'"),
    # base_url: http(s), a host, a valid port, no credentials
    ([GPT, "judge.endpoint.base_url=not-a-url"], "'judge.endpoint.base_url': must be an http(s)"),
    ([GPT, "judge.endpoint.base_url=ftp://host/v1"], "'judge.endpoint.base_url'"),
    ([GPT, "judge.endpoint.base_url=http://host:99999/v1"], "port from 1 to 65535"),
    ([GPT, "judge.endpoint.base_url=http://host:0/v1"], "port from 1 to 65535"),
    ([GPT, "judge.endpoint.base_url=http://host:abc/v1"], "port from 1 to 65535"),
    ([GPT, "judge.endpoint.base_url=''"], "'judge.endpoint.base_url'"),
    ([GPT, "judge.endpoint.base_url=http:///v1"], "must name a host"),
    ([GPT, f"judge.endpoint.base_url=http://user:{SECRET}@host/v1"], "api_key_env"),
    ([GPT, f"judge.endpoint.base_url=https://{SECRET}@host/v1"], "api_key_env"),
    ([GPT, f"judge.endpoint.base_url={SECRET}://host/v1"], "'judge.endpoint.base_url'"),
    (["summarizer=gpt4o", "summarizer.endpoint.base_url=x"], "'summarizer.endpoint.base_url'"),
    (["answerer=gpt4o", "answerer.endpoint.base_url=x"], "'answerer.endpoint.base_url'"),
    (["answerer=local", "answerer.endpoint.timeout_s=0"], "'answerer.endpoint.timeout_s'"),
    (["probe=llm_gpt4o", "probe.writer.endpoint.base_url=x"], "'probe.writer.endpoint.base_url'"),
    (["judge=panel", "judge.endpoint.base_url=not-a-url"], "'judge.endpoint.base_url'"),
    (["judge=panel", "judge.members.gpt4o.endpoint.timeout_s=0"], "members.gpt4o.endpoint"),
    (["policy=opaque", "policy.endpoint.max_retries=-1"], "'policy.endpoint.max_retries'"),
    (["summarizer=local", "summarizer.endpoint.base_url=ftp://x"], "summarizer.endpoint"),
    # every float finite, every fraction in range
    (["rubric.dimensions.accuracy.accuracy_factual=nan"], "accuracy_factual': must be a finite"),
    (["rubric.dimensions.accuracy.accuracy_factual=inf"], "accuracy_factual': must be a finite"),
    (["rubric.dimensions.accuracy.accuracy_factual=-inf"], "accuracy_factual"),
    (["rubric.dimensions.accuracy.accuracy_factual=-1"], "must be >= 0"),
    (["execution.fail_on_error=nan"], "'execution.fail_on_error': must be a finite"),
    (["execution.fail_on_error=2"], "'execution.fail_on_error': must be <= 1"),
    (["execution.fail_on_error=abc"], "'execution.fail_on_error'"),
    (["compaction.trigger_ratio=nan"], "'compaction.trigger_ratio': must be a finite"),
    (["compaction.trigger_ratio=1.5"], "'compaction.trigger_ratio': must be <= 1"),
    (["compaction.trigger_ratio=0"], "'compaction.trigger_ratio': must be > 0"),
    ([*FILES, "transcript.max_line_mb=nan"], "'transcript.max_line_mb'"),
    (["policy=truncate", "+policy.extra=nan"], "'policy.extra': must be a finite"),
    # every folder the job writes: writable, or can be made
    (["cache.dir=/proc/benchmark"], "'cache.dir'"),
    (["cache.dir={file}/sub"], "'cache.dir'"),
    (["cache.dir={file}"], "'cache.dir'"),
    (["cache.dir=''"], "'cache.dir': must not be empty"),
    (["tracking.store_dir=/proc/benchmark"], "'tracking.store_dir'"),
    (["tracking.store_dir={file}/sub"], "'tracking.store_dir'"),
    (["tracking.store_dir={file}"], "'tracking.store_dir'"),
    (["tracking.store_dir=''"], "'tracking.store_dir'"),
    # transcripts
    ([*FILES, "transcript.extensions=[]"], "'transcript.extensions'"),
    ([*FILES, "transcript.extensions=['']"], "'transcript.extensions'"),
    (["transcript=files"], "transcript.path"),
    (["transcript=files", "transcript.path=''"], "'transcript.path'"),
    ([*FILES, "transcript.format=xml"], "'transcript.format'"),
    ([*FILES, "transcript.on_error=ignore"], "'transcript.on_error'"),
    (["transcript.sessions=0"], "'transcript.sessions': must be > 0"),
    (["transcript.sessions=-3"], "'transcript.sessions'"),
    (["transcript.sessions=abc"], "'transcript.sessions'"),
    (["transcript.sessions=99999999999"], "'transcript.sessions': must be <="),
    (["transcript.target_tokens=10"], "'transcript.target_tokens'"),
    (["transcript.target_tokens=[1]"], "'transcript.target_tokens'"),
    # other values
    (["seed=abc"], "'seed'"),
    (["seed=1.5"], "'seed'"),
    (["seed=[1,2]"], "'seed'"),
    (["objective=nope"], "'objective'"),
    (["control=maybe"], "'control'"),
    (["cache.mode=sometimes"], "'cache.mode'"),
    (["execution.progress=x"], "'execution.progress'"),
    (["execution.max_probes_in_flight=0"], "'execution.max_probes_in_flight'"),
    (["probe.types=[nope]"], "'probe.types.0'"),
    (["probe.types=[]"], "'probe.types'"),
    (["probe.types=[recall,recall]"], "'probe.types'"),
    (["probe.types=recall"], "'probe.types'"),
    (["probe.per_type=0"], "'probe.per_type'"),
    (["probe.per_type=abc"], "'probe.per_type'"),
    (["compaction.context_window=0"], "'compaction.context_window'"),
    (["compaction.context_window=-5"], "'compaction.context_window'"),
    (["compaction.tail_tokens=-1"], "'compaction.tail_tokens'"),
    (["compaction.head_messages=-1"], "'compaction.head_messages'"),
    (["compaction.points=first"], "'compaction.points'"),
    (["compaction.replay=x"], "'compaction.replay'"),
    (["compaction.tail_tokens=1000000"], "compaction.tail_tokens"),
    (["tracking=server", "tracking.uri=not-a-uri"], "'tracking.uri'"),
    (["tracking=server", f"tracking.uri=http://u:{SECRET}@host:5000"], "'tracking.uri'"),
    (["tracking=server", "tracking.uri=http://host:70000"], "'tracking.uri'"),
    (["tracking.run_name=''"], "'tracking.run_name': must not be empty"),
    (["tracking.experiment=''"], "'tracking.experiment'"),
    (["tracking.trace_llm=maybe"], "'tracking.trace_llm'"),
    (["redaction.builtin=[nope]"], "'redaction.builtin'"),
    (["+redaction.patterns.x='('"], "'redaction.patterns.x'"),
    (["redaction.enabled=maybe"], "'redaction.enabled'"),
    (["rubric.scale_max=0"], "'rubric.scale_max'"),
    (["rubric.dimensions.accuracy.accuracy_factual=abc"], "accuracy_factual"),
    (["policy.name=''"], "'policy.name'"),
    (["policy._target_=nowhere.Policy"], "nowhere.Policy"),
    (["policy=truncate", "policy.recent_tokens=-5"], "recent_tokens"),
    (["policy=truncate", "policy.recent_tokens=abc"], "recent_tokens"),
    (["+audit=judge", "audit.sessions=0"], "'audit.sessions'"),
    (["+audit=judge", "audit.variants=[nope]"], "'audit.variants.0'"),
]
CASES = COMPOSITION_CASES + VALUE_CASES
# A handful as the user meets them: real processes, a real (fresh) Hydra each.
SUBPROCESS = [
    ["polcy=x"],
    ["policy=truncate", "policy.recent_tokns=1"],
    [GPT, "judge.endpoint.max_concurrency=0"],
    [GPT, f"judge.endpoint.base_url=http://user:{SECRET}@host/v1"],
    ["rubric.dimensions.accuracy.accuracy_factual=nan"],
    ["cache.dir={file}/sub"],
    ["hydra.run.dir=/proc/benchmark"],
    [*FILES, "transcript.extensions=[]"],
]


def _args(case: list[str], tmp_path, hydra_dirs: bool = True) -> list[str]:
    """The case's overrides, with every folder the job could write kept under tmp_path."""
    (tmp_path / "file").write_text("a regular file\n")
    base = [
        *([f"hydra.run.dir={tmp_path / 'outputs'}"] if hydra_dirs else []),
        *([f"hydra.sweep.dir={tmp_path / 'multirun'}"] if hydra_dirs else []),
        f"cache.dir={tmp_path / 'cache'}",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
    ]
    given = [a.replace("{file}", str(tmp_path / "file")) for a in case]
    flags = [a for a in given if a.startswith("-")]
    keys = {a.lstrip("+~").split("=", 1)[0] for a in given}
    return [*flags, *(b for b in base if b.split("=", 1)[0] not in keys), *given[len(flags) :]]


def _one_error_line(stderr: str, expected: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), lines[0]
    assert expected in lines[0], lines[0]
    assert SECRET[:8] not in lines[0]
    return lines[0]


def test_the_battery_is_large():
    assert len(CASES) >= 100
    assert len({" ".join(c) for c, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("case", "expected"), COMPOSITION_CASES, ids=[" ".join(c) for c, _ in COMPOSITION_CASES]
)
def test_bad_override_is_one_line_and_exit_2(case, expected, offline, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["benchmark", *_args(case, offline)])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    assert exit_.value.code == 2, err
    _one_error_line(err, expected)
    assert "HYDRA_FULL_ERROR" not in os.environ  # left as it was
    assert not (offline / "mlruns").exists()  # failed before the store was touched


@pytest.mark.parametrize(
    ("case", "expected"), VALUE_CASES, ids=[" ".join(c) for c, _ in VALUE_CASES]
)
def test_bad_value_is_one_line_and_exit_2(case, expected, offline, capsys):
    cfg = compose_config(_args(case, offline, hydra_dirs=False))
    with pytest.raises(SystemExit) as exit_:
        hydra_main(cfg)  # the job function as Hydra calls it, on the composed config
    out, err = capsys.readouterr()
    assert exit_.value.code == 2, err
    _one_error_line(err, expected)
    assert "HYDRA_FULL_ERROR" not in os.environ  # left as it was
    assert not (offline / "mlruns").exists()  # failed before the store was touched


def test_a_good_command_runs_after_bad_ones_in_process(offline, monkeypatch, capsys):
    for argv in (["polcy=x"], ["--cfg", "job", "policy=truncate"]):
        monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
        try:
            main()
        except SystemExit as exc:
            assert exc.code == 2
    out, err = capsys.readouterr()
    assert "_target_: benchmark.policy.Truncate" in out


@pytest.mark.parametrize("case", SUBPROCESS, ids=[" ".join(c) for c in SUBPROCESS])
def test_bad_override_in_a_real_process(case, tmp_path):
    expected = dict((" ".join(c), e) for c, e in CASES)[" ".join(case)]
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    proc = run_benchmark(_args(case, tmp_path), tmp_path, env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    _one_error_line(proc.stderr, expected)
    assert SECRET[:8] not in proc.stdout
