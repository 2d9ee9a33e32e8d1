"""The next-step reading and its 5/3/1/0 score, table-driven: verbs across formats,
targets across spellings, every score, and answers that give no step."""

from __future__ import annotations

import pytest

from benchmark.activity.next_step import (
    NextStep,
    command_target,
    normalize_target,
    parse_answer,
    same_target,
    score,
    shell_step,
    verb_of,
)

# (tool, sub-command or text command, verb): the formats the importers read.
VERB_CASES = [
    ("bash", None, "bash"),  # SWE-agent function calling, generic chat tools
    ("Bash", None, "bash"),  # Claude Code
    ("exec_command", None, "bash"),  # Codex
    ("shell", None, "bash"),  # Codex (argv)
    ("str_replace_editor", "view", "open"),
    ("str_replace_editor", "str_replace", "edit"),
    ("str_replace_editor", "insert", "edit"),
    ("str_replace_editor", "create", "create"),
    ("Read", None, "open"),
    ("Edit", None, "edit"),
    ("Write", None, "create"),
    ("apply_patch", None, "edit"),
    ("open", None, "open"),  # SWE-agent text protocol
    ("edit", None, "edit"),
    ("create", None, "create"),
    ("search_dir", None, "search"),
    ("find_file", None, "search"),
    ("mcp__fs__read_file", None, "open"),  # an MCP server's tool, by its own name
    ("frobnicate", None, "frobnicate"),  # a tool no verb covers keeps its name
]


@pytest.mark.parametrize(("tool", "command", "verb"), VERB_CASES)
def test_verb_of_each_format(tool: str, command: str | None, verb: str) -> None:
    assert verb_of(tool, command) == verb


COMMAND_CASES = [
    ("pytest tests/test_a.py::test_x -q", "tests/test_a.py::test_x"),
    ("python -m pytest -x tests/test_a.py", "tests/test_a.py"),
    ("cd /testbed && python -m pytest tests/test_b.py", "tests/test_b.py"),
    ("python3 reproduce.py", "reproduce.py"),
    ("python -c 'import a'", "python"),
    ("git diff src/a.py", "git diff"),
    ("ls -la /testbed", "ls"),
    ("sudo FOO=1 make test", "make test"),
    ("timeout -k 5 600 pytest tests/test_c.py", "tests/test_c.py"),
    ("bash -lc 'pytest tests/test_d.py -q'", "tests/test_d.py"),
    ("", None),
]


@pytest.mark.parametrize(("command", "target"), COMMAND_CASES)
def test_command_target(command: str, target: str | None) -> None:
    assert command_target(command) == target


SHELL_STEP_CASES = [
    ("cat src/a.py", ("open", "src/a.py")),
    ("sed -n 1,80p src/a.py", ("open", "src/a.py")),
    ("cd /testbed && nl -ba src/a.py", ("open", "src/a.py")),
    ("timeout 10 head -50 a.py", ("open", "a.py")),
    ("cat a.py > b.py", ("create", "b.py")),  # writes b.py: not a read
    ("cat a.py | grep x", ("bash", "cat")),  # two commands
    ("cat a.py b.py", ("bash", "cat")),  # two files
    ("python reproduce.py", ("bash", "reproduce.py")),
    ("", None),
    # A step that writes a file is the creation or the edit of that file.
    ("cd /testbed && cat > repro.py <<'EOF'\nimport x\nEOF", ("create", "repro.py")),
    ("cat <<'EOF' > repro.py\nimport x\nEOF\npython repro.py", ("create", "repro.py")),
    ("cat >> notes.md <<EOF\nmore\nEOF", ("edit", "notes.md")),
    ("sed -i 's/a/b/' src/a.py", ("edit", "src/a.py")),
    ("cd /testbed && sed -i '12s/x/y/' src/a.py && sed -n 10,14p src/a.py", ("edit", "src/a.py")),
    ("tee src/new.py <<'EOF'\nx = 1\nEOF", ("create", "src/new.py")),
    ("echo 'x = 1' > src/cfg.py", ("create", "src/cfg.py")),
    (
        "python - <<'EOF'\np = 'src/a.py'\ns = open(p).read()\n"
        "open('src/a.py', 'w').write(s.replace('a', 'b'))\nEOF",
        ("edit", "src/a.py"),
    ),
    ("python3 -c \"open('out/new.txt', 'w').write('hi')\"", ("create", "out/new.txt")),
    ("python3 -c \"from pathlib import Path; Path('a.txt').write_text('x')\"", ("create", "a.txt")),
    ("python reproduce.py > out.log 2>&1", ("bash", "reproduce.py")),  # a run, logged
    ('python -c "import x; print(x.f())"', ("bash", "python")),
    # Searches: the pattern looked for, as SWE-agent's search tools give it.
    ("grep -rn 'def slugify' src/", ("search", "def slugify")),
    ("cd /testbed && grep -rn --include=*.py -A 3 slugify . | head -20", ("search", "slugify")),
    ("rg -e 'x=1' -g '*.py'", ("search", "x=1")),
    ("find /testbed -name 'slug*.py'", ("search", "slug*.py")),
    ("git grep -n parse_date", ("search", "parse_date")),
    # Test runs: the test target, after set-up commands.
    (
        "source .venv/bin/activate && python -m pytest -x tests/test_a.py",
        ("bash", "tests/test_a.py"),
    ),
    ("cd /testbed && export X=1 && pytest tests/b.py::test_c -q", ("bash", "tests/b.py::test_c")),
    ("rm reproduce.py", ("delete", "reproduce.py")),
    ("nl -ba tests/test_retry.py | sed -n '1,40p'", ("open", "tests/test_retry.py")),
]


@pytest.mark.parametrize(("command", "step"), SHELL_STEP_CASES)
def test_shell_step_reads_one_file_as_open(command: str, step: tuple[str, str] | None) -> None:
    assert shell_step(command) == step


SAME_TARGET_CASES = [
    ("./src/a.py", "/testbed/src/a.py", True),
    ("src/a.py", "a.py", True),
    ("`src/a.py`", "src/a.py", True),
    ("'src/a.py'", '"src/a.py"', True),
    ("src/a.py.", "src/a.py", True),
    ("src/a.py:12", "src/a.py", True),
    ("src/a.py:12-20", "/testbed/src/a.py", True),
    ("src/./pkg/../a.py", "src/a.py", True),
    ("tests/test_a.py::test_x", "tests/test_a.py", True),  # a bare file matches its tests
    ("/testbed/tests/test_a.py::test_x", "tests/test_a.py::test_x", True),
    ("tests/test_a.py::test_x", "tests/test_a.py::test_y", False),
    ("src/a.py", "src/b.py", False),
    ("b/a.py", "c/a.py", False),
    ("src/a.py", "xsrc/a.py", False),  # whole components only
    ("src", "lib/src", False),  # a bare directory name is too vague
    ("git diff", "git diff", True),
    ("git diff", "git status", False),
]


@pytest.mark.parametrize(("a", "b", "same"), SAME_TARGET_CASES)
def test_same_target(a: str, b: str, same: bool) -> None:
    assert same_target(a, b) is same
    assert same_target(b, a) is same


def test_normalize_target_keeps_the_test_id_and_the_command() -> None:
    assert normalize_target("./tests/t.py::test_x") == "tests/t.py::test_x"
    assert normalize_target("git diff") == "git diff"


# (answer, step read from it): the formats an answerer may reply in.
ANSWER_CASES = [
    ("edit src/a.py", NextStep(verb="edit", target="src/a.py")),
    ("Edit: src/a.py", NextStep(verb="edit", target="src/a.py")),
    ("Read(src/a.py)", NextStep(verb="open", target="src/a.py")),
    ("`edit src/a.py`", NextStep(verb="edit", target="src/a.py")),
    ("```\nedit src/a.py\n```", NextStep(verb="edit", target="src/a.py")),
    ("Next action: open ./src/a.py", NextStep(verb="open", target="src/a.py")),
    ("- view 'src/a.py'", NextStep(verb="open", target="src/a.py")),
    ("str_replace_editor /testbed/src/a.py", NextStep(verb="edit", target="/testbed/src/a.py")),
    ("apply_patch src/a.py", NextStep(verb="edit", target="src/a.py")),
    ("edit src/a.py:12-20", NextStep(verb="edit", target="src/a.py")),
    ("bash pytest tests/t.py::test_x -q", NextStep(verb="bash", target="tests/t.py::test_x")),
    ("run `pytest -x tests/t.py`", NextStep(verb="bash", target="tests/t.py")),
    ("bash 'python reproduce.py'", NextStep(verb="bash", target="reproduce.py")),
    ("bash git diff", NextStep(verb="bash", target="git diff")),
    ("find_file a.py", NextStep(verb="search", target="a.py")),
    ("\n\nedit src/a.py\nbecause the test fails", NextStep(verb="edit", target="src/a.py")),
]


@pytest.mark.parametrize(("text", "step"), ANSWER_CASES)
def test_parse_answer(text: str, step: NextStep) -> None:
    assert parse_answer(text) == step


UNPARSEABLE = [
    "",
    "   \n  ",
    "edit",  # no target
    "I would edit src/a.py next.",  # prose: "I" is no verb
    "NOT IN CONTEXT",
    "frobnicate src/a.py",  # a tool the session does not have
    "open(",
]


@pytest.mark.parametrize("text", UNPARSEABLE)
def test_unparseable_answers_give_no_step(text: str) -> None:
    assert parse_answer(text) is None


def test_a_session_tool_no_verb_covers_is_read_when_known() -> None:
    assert parse_answer("frobnicate src/a.py", known=("frobnicate",)) == NextStep(
        verb="frobnicate", target="src/a.py"
    )


GOLD = NextStep(verb="edit", target="/testbed/src/a.py", region="lines 10-20")
# (answer, points): every score, across spellings.
SCORE_CASES = [
    ("edit ./src/a.py", 5),
    ("Edit(src/a.py)", 5),
    ("str_replace_editor a.py", 5),
    ("open src/a.py", 3),  # same file, other verb
    ("bash python src/a.py", 3),  # running the file is about the same file
    ("edit src/b.py", 1),  # same verb, other file
    ("bash pytest tests/test_a.py", 0),
    ("open src/b.py", 0),
    ("I don't know", 0),  # unparseable: a wrong answer, not a failure
]


@pytest.mark.parametrize(("text", "points"), SCORE_CASES)
def test_score_of_answers(text: str, points: int) -> None:
    assert score(parse_answer(text), GOLD) == points


def test_score_of_test_targets() -> None:
    gold = NextStep(verb="bash", target="tests/test_a.py::test_x")
    assert score(parse_answer("bash pytest tests/test_a.py"), gold) == 5
    assert score(parse_answer("bash pytest tests/test_a.py::test_y"), gold) == 1
    assert score(parse_answer("open tests/test_a.py"), gold) == 3
    assert score(None, gold) == 0


@pytest.mark.parametrize(
    ("answer", "gold", "points"),
    [
        ("edit src/a.py", NextStep(verb="edit", target="src/a.py"), 5),
        ("bash sed -i 's/a/b/' src/a.py", NextStep(verb="edit", target="src/a.py"), 5),
        ("bash cat > repro.py <<EOF", NextStep(verb="create", target="repro.py"), 5),
        ("search 'def slugify'", NextStep(verb="search", target="def slugify"), 5),
        ("grep -rn slugify src/", NextStep(verb="search", target="slugify"), 5),
        ("bash grep -rn slugify .", NextStep(verb="search", target="slugify"), 5),
        ("find_file slug.py", NextStep(verb="search", target="slug.py"), 5),
        ("bash pytest tests/t.py -x", NextStep(verb="bash", target="tests/t.py"), 5),
    ],
)
def test_answers_read_as_the_gold_is(answer: str, gold: NextStep, points: int) -> None:
    """An answer is read the way the gold is, so a right answer in shell words scores 5."""
    assert score(parse_answer(answer), gold) == points
