"""An agent's next step as ``verb target``: the one shape gold, answers and scores share.

Formats name one operation many ways (``str_replace_editor`` with ``command:
str_replace``, Claude Code's ``Edit``, Codex's ``apply_patch``, SWE-agent's
``edit 12:20``); a next-action probe compares what the agent did with what an
answerer says it would do, so both are reduced to a small set of verbs and a
target here: the file path, the test id, or the head of a shell command.
Scoring is LLM-free (:func:`score`): 5 same verb and target, 3 same target, 1
same verb, 0 otherwise.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, Field

from benchmark.activity.command_steps import SEARCH_PROGRAMS, search_pattern, written_file
from benchmark.activity.shell import programs, shell_ops
from benchmark.activity.vocabulary import EDITOR_COMMANDS, tool_key, tool_kind

# The verbs an answer may use, in the order a question lists them.
VERBS: tuple[str, ...] = ("bash", "open", "edit", "create", "search", "delete")
_KIND_VERB = {
    "shell": "bash",
    "stdin": "bash",
    "read": "open",
    "edit": "edit",
    "patch": "edit",
    "write": "create",
    "search": "search",
    "delete": "delete",
}
_EDITOR_VERB = {"read": "open", "edit": "edit", "write": "create"}
# Words an answer may use for a verb, beyond the tool names the vocabulary knows.
_ANSWER_WORDS = {
    "run": "bash",
    "shell": "bash",
    "execute": "bash",
    "test": "bash",
    "view": "open",
    "read": "open",
    "cat": "open",
    "modify": "edit",
    "str_replace": "edit",
    "insert": "edit",
    "apply_patch": "edit",
    "patch": "edit",
    "write": "create",
    "find": "search",
    "grep": "search",
}
# Steps that end a session rather than continue it: never a next-action gold.
FINISH_TOOLS = frozenset(
    {"submit", "finish", "exit", "task_complete", "attempt_completion", "complete", "done", "stop"}
)
# What mini-swe-agent's shell prints to end a session (v1 and v2 spellings).
FINISH_ECHO = re.compile(r"^\s*(?:cd\s+\S+\s*&&\s*)?echo\s+['\"]?\w*(?:COMPLETE_TASK|FINAL_OUTPUT)")

# ``src/a.py:12`` or ``src/a.py:12-20``: a file and a line (range); the file is the target.
_LINE_SUFFIX = re.compile(r"(\.\w+):\d+(?:[-:]\d+)?$")
# Test runners: their first operand is the test id or path they run.
_TEST_PROGRAMS = frozenset({"pytest", "py.test", "tox", "nox"})
_PYTHON = re.compile(r"python\d?(?:\.\d+)?")
_SCRIPT_RUNNERS = frozenset({"node", "bash", "sh", "ruby", "perl", "php"})
# Commands that only set up the shell before the one that does the work.
_SETUP = frozenset({"cd", "pushd", "source", ".", "export", "set", "unset", "ulimit", "true"})
# Programs that only filter what the command before them printed (``grep ... | head``).
_FILTERS = frozenset({"head", "tail", "sort", "uniq", "wc", "less", "more", "cut", "tr"})
# Programs whose first word alone says little: the head keeps their subcommand.
_SUBCOMMANDS = frozenset(
    {"git", "pip", "pip3", "npm", "yarn", "pnpm", "cargo", "go", "make", "uv", "poetry", "docker"}
)


class NextStep(BaseModel):
    """One step as a verb from :data:`VERBS` (or a tool name no verb covers) and its target;
    ``region`` is what an edit touches (a symbol or ``lines a-b``) where the log says."""

    model_config = ConfigDict(frozen=True)

    verb: str = Field(min_length=1)
    target: str = Field(min_length=1)
    region: str | None = None

    def line(self) -> str:
        """The fixed short format a question asks for: ``verb target``."""
        return f"{self.verb} {self.target}"


def verb_of(tool: str, command: str | None = None) -> str:
    """The verb of a call to ``tool`` (``command``: an editor tool's sub-command, or a
    SWE-agent text command's name); an unknown tool keeps its own (lowercased) name."""
    key = tool_key(tool)
    kind = tool_kind(key)
    if kind == "editor":
        op = EDITOR_COMMANDS.get((command or "").lower())
        return _EDITOR_VERB[op] if op is not None else "edit"
    if kind is not None:
        return _KIND_VERB[kind]
    return _ANSWER_WORDS.get(key, key)


def _commands(command: str) -> list[tuple[str, list[str]]]:
    """The simple commands of ``command`` as :func:`~benchmark.activity.shell.programs`
    reads them (wrappers, env assignments and ``bash -c`` scripts unwrapped), without the
    ``cd``, ``source`` or ``export`` that lead so many agent commands."""
    found = programs(command) if command.strip() else []
    while found and found[0][0] in _SETUP:
        found = found[1:]
    return found


def _test_run(program: str, args: list[str]) -> str | None:
    """The target of a test runner's run (its first operand, else the runner); else None."""
    python = bool(_PYTHON.fullmatch(program))
    module = args[1] if python and len(args) > 1 and args[0] == "-m" else None
    if program not in _TEST_PROGRAMS and module not in ("pytest", "unittest"):
        return None
    operands = [a for a in (args[2:] if module else args) if not a.startswith("-")]
    return operands[0] if operands else f"{program} -m {module}" if module else program


def command_target(command: str) -> str | None:
    """What a shell command is about: the test id or path a test runner runs, the script a
    runner runs, else the command's head (``git diff``, ``ls``); None for an empty one."""
    found = _commands(command)
    if not found:
        return None
    for program, args in found:  # a test run anywhere in the command is what it is for
        tested = _test_run(program, args)
        if tested:
            return tested
    program, args = found[0]
    python = bool(_PYTHON.fullmatch(program))
    if python or program in _SCRIPT_RUNNERS:
        for word in args:
            if word in ("-c", "-m"):
                break
            if not word.startswith("-"):
                return word
    if program in _SUBCOMMANDS and args and not args[0].startswith("-"):
        return f"{program} {args[0]}"
    return program


def shell_step(command: str) -> tuple[str, str] | None:
    """A shell command as (verb, target), read as the file tools' calls are: one that writes
    a file with text it carries (``cat > f <<EOF``, ``sed -i``, a script writing a path) is
    ``create``/``edit`` of it; a ``grep``/``rg``/``find`` (piped to a filter or not) is
    ``search`` of its pattern; one command that only reads one file (``cat a.py``, ``sed
    -n 1,80p a.py``) is ``open`` of it; any other is ``bash`` of :func:`command_target`.
    None for an empty one."""
    found = _commands(command)
    written = written_file(command)
    if written:
        return written
    head = found[0] if found else ("", [])
    if head[0] == "git" and head[1][:1] == ["grep"]:
        head = ("grep", head[1][1:])
    if head[0] in SEARCH_PROGRAMS and all(p in _FILTERS for p, _ in found[1:]):
        pattern = search_pattern(*head)
        if pattern:
            return "search", pattern
    if found and all(p in _FILTERS or p in ("sed", "nl") for p, _ in found[1:]):
        ops = shell_ops(command)  # ``cat a.py``, ``nl -ba a.py | sed -n 1,40p``, ``rm a.py``
        if len(ops) == 1 and ops[0][0] in ("read", "delete"):
            return ("open" if ops[0][0] == "read" else "delete"), ops[0][1]
    target = command_target(command)
    return ("bash", target) if target else None


def normalize_target(target: str) -> str:
    """``target`` without quotes, backticks, ``./``, a ``:line`` suffix, or trailing
    punctuation and slashes."""
    text = target.strip().strip("`'\"").rstrip(".,;:)").strip()
    path, sep, test = text.partition("::")
    path = _LINE_SUFFIX.sub(r"\1", path.strip())
    if "/" in path or path.startswith("."):
        path = posixpath.normpath(path) if path not in ("", ".") else path
        while path.startswith("./"):
            path = path[2:]
    return path + sep + test


def same_target(a: str, b: str) -> bool:
    """The same file (one path a whole-component suffix of the other: ``src/a.py`` and
    ``/testbed/src/a.py``), the same test (``file::name``; a bare file matches its tests),
    or the same command head."""
    a, b = normalize_target(a), normalize_target(b)
    if a == b:
        return True
    path_a, _, test_a = a.partition("::")
    path_b, _, test_b = b.partition("::")
    if test_a and test_b and test_a != test_b:
        return False
    if not path_a or not path_b:
        return False
    parts_a, parts_b = path_a.strip("/").split("/"), path_b.strip("/").split("/")
    short, long = sorted((parts_a, parts_b), key=len)
    return long[-len(short) :] == short and ("." in short[-1] or len(short) > 1)


# ``verb target``, ``verb: target`` or ``Verb(target)``, after a list mark or "Next action:".
_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)?(?:next(?: action| step)?\s*:\s*)?`*([\w.-]+?)`*"
    r"(?::?\s+(.+?)|\((.+)\))\s*$",
    re.I,
)


def _step_line(text: str) -> tuple[str, str] | None:
    """The word and the rest of an answer's first non-empty line (code fences and a
    leading "Next action:" allowed); None when that line has no ``word rest`` shape."""
    for raw in text.splitlines():
        line = raw.strip().strip("`").strip()
        if not line:
            continue
        found = _LINE.match(line)
        if found is None:
            return None
        rest = found.group(2) if found.group(2) is not None else found.group(3)
        return found.group(1), rest.strip().strip("`").strip()
    return None


def parse_answer(text: str, known: Collection[str] = ()) -> NextStep | None:
    """The ``verb target`` an answer gives on its first non-empty line (code fences and
    a leading "Next action:" allowed); None when that line has no such shape or its verb
    is neither in :data:`VERBS` nor ``known`` (the session's own tool names)."""
    found = _step_line(text)
    if found is None:
        return None
    word, rest = found
    verb = verb_of(word)
    if verb not in VERBS and verb not in known:
        return None
    if verb == "bash" or word.lower() in SEARCH_PROGRAMS:
        command = rest.strip("'\"") if verb == "bash" else f"{word} {rest}"
        step = shell_step(command)
        if step is None:
            return None
        verb, target = step
    elif verb == "search" and rest[:1] in ("'", '"'):  # a quoted pattern, spaces and all
        target = normalize_target(rest[1:].split(rest[0], 1)[0])
    else:
        target = normalize_target(rest.split()[0]) if rest else ""
    if not target:
        return None
    return NextStep(verb=verb, target=target)


def score(answer: NextStep | None, gold: NextStep) -> int:
    """5 same verb and target; 3 same target, other verb; 1 same verb, other target; 0."""
    if answer is None:
        return 0
    same_verb = answer.verb == gold.verb
    target = same_target(answer.target, gold.target)
    if target:
        return 5 if same_verb else 3
    return 1 if same_verb else 0
