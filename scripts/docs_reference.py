"""Write the config reference and ``--help`` from one source: the schemas and ``conf/``.

    python scripts/docs_reference.py           # rewrite the generated files
    python scripts/docs_reference.py --check   # exit 1, naming them, when one is stale

The generated files:

- ``docs/reference.md``: every config group with its options (each option file's first
  comment sentence as its meaning), every key of ``BenchmarkConfig`` and of the models
  under it (type, default, bounds, description), each part's options per target class,
  and the endpoint fields;
- ``conf/hydra/help/benchmark.yaml``: what ``python -m benchmark --help`` prints (Hydra's
  ``hydra.help.template``): the groups with each option's meaning, the top-level keys and
  the ten commands people use most;
- the block of those ten commands in ``README.md`` (between its ``commands`` markers).

Nothing here is typed twice: a key's description lives in its pydantic ``Field``, an
option's meaning in its YAML file, so ``tests/test_docs.py`` fails when a schema or an
option changed and this script was not rerun.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from docs_schema import (
    PARTS,
    benchmark_config,
    cell,
    doc_line,
    key_rows,
    model_sections,
    part_sections,
    sub_models,
)
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
REFERENCE = ROOT / "docs" / "reference.md"
HELP = CONF / "hydra" / "help" / "benchmark.yaml"
README = ROOT / "README.md"
START, END = "<!-- commands:start -->", "<!-- commands:end -->"

# The ten commands people use most: README.md and --help show them.
COMMANDS = [
    ("python -m benchmark", "the default job: offline, anchor_index on 12 generated sessions"),
    ("python -m benchmark policy=truncate control=true", "a policy, with retention vs control"),
    (
        "python -m benchmark -m policy=none,truncate,observation_mask,tool_clear,anchor_index",
        "a sweep: one MLflow run per policy",
    ),
    ("python -m benchmark.report", "the latest sweep's report: table, differences, plots"),
    (
        "python -m benchmark transcript=files transcript.path='~/sessions/*.jsonl'",
        "your agents' own logs",
    ),
    ("python -m benchmark.preview ~/sessions/rollout.jsonl", "what a log holds, its probes"),
    (
        "python -m benchmark policy=hermes judge=gpt4o answerer=gpt4o_mini",
        "LLM judge and answerer (key in OPENAI_API_KEY)",
    ),
    ("python -m benchmark judge=local answerer=local", "a model you serve (LOCAL_LLM_BASE_URL)"),
    ("python -m benchmark +audit=judge judge=reference", "audit a judge on known answers"),
    ("python -m benchmark --cfg job", "print the composed config"),
]

# How each group is selected and what it is for (its options' meanings come from conf/).
GROUPS: dict[str, tuple[str, str]] = {
    "transcript": ("transcript=", "the sessions a job compacts: generated, or your own logs"),
    "policy": ("policy=", "the compaction policy under test"),
    "summarizer": ("summarizer=", "the summarizer the summarizing policies call"),
    "probe": ("probe=", "how probes are made: the deterministic extractor or an LLM writer"),
    "answerer": ("answerer=", "who answers each probe from the compacted context"),
    "judge": ("judge=", "who scores each answer on the rubric"),
    "rubric": ("rubric=", "the rubric: dimensions, criteria, scale"),
    "tracking": ("tracking=", "where runs are logged (MLflow)"),
    "endpoint": ("endpoint@<key>=", "an LLM endpoint, selected by each LLM role"),
    "experiment": ("+experiment=", "bundled sweeps of the groups above"),
    "audit": ("+audit=", "audit the judge instead of running the benchmark"),
    "task": ("+experiment=task_success task=", "tasks resumed at compaction points"),
    "agent": ("+experiment=task_success agent=", "the agent resumed (task success)"),
    "user": ("+experiment=task_success user=", "the simulated customer (task success)"),
    "hydra/launcher": ("hydra/launcher=", "where a sweep's jobs run (also: joblib)"),
}


# -- conf/ --------------------------------------------------------------------------------


def meaning(path: Path) -> str:
    """An option file's first comment sentence (``@package`` lines and examples aside)."""
    words: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            if words:
                break
            continue
        text = line[1:]
        if text.strip().startswith("@package") or text.startswith("   "):
            if words:
                break
            continue
        words.append(text.strip())
    # A sentence ends at a full stop after a word (not "e.g." or "i.e.") and a space.
    sentence = re.split(r"(?<!e\.g)(?<!i\.e)(?<=[\w)\"'])\.\s+", " ".join(words), maxsplit=1)[0]
    return sentence.strip().rstrip(".") + "."


def options(group: str) -> list[tuple[str, str]]:
    """The group's options in ``conf/`` with their meanings, sorted by name."""
    return [(p.stem, meaning(p)) for p in sorted((CONF / group).glob("*.yaml"))]


def default_option(group: str) -> str | None:
    """The option ``conf/config.yaml``'s defaults list picks for ``group``."""
    text = (CONF / "config.yaml").read_text(encoding="utf-8")
    found = re.search(rf"^\s*-\s*{re.escape(group)}:\s*(\w+)", text, re.M)
    return found[1] if found else None


# -- renderers ----------------------------------------------------------------------------


def render_reference() -> str:
    from benchmark.llm.endpoint import Endpoint

    out = [
        "<!-- written by `python scripts/docs_reference.py` from the config schemas and "
        "conf/; do not edit -->",
        "# Reference",
        "",
        "Every config group and key, generated from the schemas and `conf/` "
        "(`python scripts/docs_reference.py`). `python -m benchmark --help` prints the "
        "groups from the same source; `python -m benchmark --cfg job` prints the composed "
        "config.",
        "",
        "## Config groups",
        "",
    ]
    for group, (how, what) in GROUPS.items():
        chosen = default_option(group)
        out += [f"### `{group}`", "", f"{what[0].upper()}{what[1:]}; select with `{how}<option>`."]
        if chosen:
            out[-1] += f" Default: `{chosen}`."
        out += ["", "| option | meaning |", "|---|---|"]
        out += [f"| `{name}` | {cell(text)} |" for name, text in options(group)]
        out.append("")
    out += ["## Keys", ""]
    model_sections(benchmark_config(), "", "Top level", out)
    part_sections(out)
    out += ["## Endpoint fields", ""]
    out.append(
        "An LLM role's `endpoint` (`conf/endpoint/<name>.yaml`, selected with "
        "`endpoint@<role key>=<name>`; one field with `<role key>.<field>=...`)."
    )
    out.append("")
    out += ["| key | type | default | bounds | description |", "|---|---|---|---|---|"]
    out += key_rows(Endpoint, "")
    return "\n".join(out).rstrip() + "\n"


def render_help() -> str:
    """``hydra.help`` for ``conf/hydra/help/``: plain text, no Hydra interpolation."""
    root = benchmark_config()
    lines = [
        "compaction-benchmark: what an LLM agent still knows after its context is compacted.",
        "",
        "Usage: python -m benchmark [group=option ...] [key=value ...]",
        "       python -m benchmark -m group=a,b,c ...    (a sweep)",
        "",
        "== Config groups (group=option; * = default) ==",
    ]
    for group, (how, what) in GROUPS.items():
        chosen = default_option(group)
        lines += ["", f"{group}: {what} ({how}<option>)"]
        for name, text in options(group):
            mark = "*" if name == chosen else " "
            lines += _wrapped(f"  {mark}{name:<22} ", text)
    lines += ["", "== Other keys (key=value or key.sub=value; all: docs/reference.md) =="]
    for name, field in root.model_fields.items():
        if name in GROUPS or name in PARTS:
            continue  # a group above
        text = field.description or doc_line(_field_model(field)) or ""
        text = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]  # its first sentence
        lines += _wrapped(f"  {name:<13}", text)
    lines += ["", "== Commands people use most =="]
    lines += [f"  {cmd}\n      {what}" for cmd, what in COMMANDS]
    lines += [
        "",
        "--cfg job prints the composed config, --hydra-help Hydra's own flags.",
        "Docs: docs/index.md (mkdocs serve), config reference: docs/reference.md",
    ]
    text = "\n".join(lines)
    if "${" in text:
        raise ValueError("help text must not hold '${' (Hydra would read an interpolation)")
    body = text.replace("$", "$$")  # hydra.help.template is a string.Template
    indented = "\n".join(("  " + line).rstrip() for line in body.splitlines())
    return (
        "# Written by `python scripts/docs_reference.py` (the source of docs/reference.md);\n"
        "# do not edit: `python -m benchmark --help` prints the template.\n"
        "app_name: benchmark\nheader: ''\nfooter: ''\ntemplate: |-\n" + indented + "\n"
    )


def _wrapped(label: str, text: str, width: int = 100) -> list[str]:
    """``label`` then ``text`` wrapped to ``width``, continuation lines under the text."""
    import textwrap

    return textwrap.wrap(
        " ".join(text.split()) or "-",
        width,
        initial_indent=label,
        subsequent_indent=" " * len(label),
        break_on_hyphens=False,
    )


def _field_model(field: FieldInfo) -> Any:
    models = sub_models(field.annotation)
    return models[0] if models else None


def render_readme(current: str) -> str:
    """README.md with its ten-commands block rewritten."""
    rows = [
        f"{cmd:<54} # {what}" if len(cmd) < 54 else f"{cmd}\n{'':<54} # {what}"
        for cmd, what in COMMANDS
    ]
    block = "\n".join([START, "```bash", *rows, "```", END])
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    if not pattern.search(current):
        raise ValueError(f"README.md has no {START} ... {END} block")
    return pattern.sub(lambda _: block, current)


def outputs() -> dict[Path, str]:
    return {
        REFERENCE: render_reference(),
        HELP: render_help(),
        README: render_readme(README.read_text(encoding="utf-8")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        stale.append(path.relative_to(ROOT))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        names = ", ".join(map(str, stale))
        print(f"stale: {names}; run: python scripts/docs_reference.py", file=sys.stderr)
        return 1
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
