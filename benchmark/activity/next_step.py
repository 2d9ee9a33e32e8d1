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
import shlex
from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, Field

from benchmark.activity.vocabulary import EDITOR_COMMANDS, READ_PROGRAMS, tool_key, tool_kind

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

# Runners whose first non-option argument is the test id or path they run.
_TEST_RUNNERS = re.compile(
    r"^(?:pytest|py\.test|python\d?(?:\.\d+)?\s+-m\s+(?:pytest|unittest)|tox|nox)\b"
)
_SCRIPT_RUNNERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "perl", "php"})
# Programs whose first word alone says little: the head keeps their subcommand.
_SUBCOMMANDS = frozenset(
    {"git", "pip", "pip3", "npm", "yarn", "pnpm", "cargo", "go", "make", "uv", "poetry", "docker"}
)
# ``src/a.py:12`` or ``src/a.py:12-20``: a file and a line (range); the file is the target.
_LINE_SUFFIX = re.compile(r"(\.\w+):\d+(?:[-:]\d+)?$")
_WRAPPERS = frozenset({"sudo", "time", "nohup", "env", "command", "exec", "timeout"})


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


def command_target(command: str) -> str | None:
    """What a shell command is about: the test id or path a test runner runs, the script a
    runner runs, else the command's head (``git diff``, ``ls``); None for an empty one."""
    try:
        words = shlex.split(command.strip().splitlines()[0] if command.strip() else "")
    except ValueError:
        words = command.split()
    while words and (words[0] in _WRAPPERS or "=" in words[0].split("/")[0]):
        words = words[1:]
    if not words:
        return None
    if words[0] == "cd" and "&&" in words:
        return command_target(" ".join(words[words.index("&&") + 1 :]))
    line = " ".join(words)
    runner = _TEST_RUNNERS.match(line)
    if runner:
        rest = line[runner.end() :].split()
        for word in rest:
            if not word.startswith("-") and word not in ("&&", "|", ";"):
                return word
        return runner.group(0)
    program = posixpath.basename(words[0])
    if program in _SCRIPT_RUNNERS or re.fullmatch(r"python\d(?:\.\d+)?", program):
        for word in words[1:]:
            if word in ("-c", "-m"):
                break
            if not word.startswith("-"):
                return word
    if program in _SUBCOMMANDS and len(words) > 1 and not words[1].startswith("-"):
        return f"{program} {words[1]}"
    return program


def shell_step(command: str) -> tuple[str, str] | None:
    """A shell command as (verb, target): one that only prints a file (``cat a.py``,
    ``sed -n 1,80p a.py``, ``head -50 a.py``) is ``open`` of that file, as the file tools'
    reads are; any other is ``bash`` of :func:`command_target`. None for an empty one."""
    try:
        words = shlex.split(command.strip())
    except ValueError:
        words = command.split()
    while words and words[0] in _WRAPPERS:
        words = words[1:]
    if words and words[0] == "cd" and "&&" in words:
        return shell_step(shlex.join(words[words.index("&&") + 1 :]))
    if words and len(words) <= 6 and not set(words) & {"|", ">", "&&", ";", "||"}:
        program = posixpath.basename(words[0])
        printing = program in READ_PROGRAMS or (program == "sed" and "-n" in words[1:])
        files = [w for w in words[1:] if not w.startswith("-") and _looks_like_file(w)]
        if printing and len(files) == 1:
            return "open", files[0]
    target = command_target(command)
    return ("bash", target) if target else None


def _looks_like_file(word: str) -> bool:
    return "/" in word or bool(re.search(r"\.\w{1,8}$", word))


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
    if verb == "bash":
        step = shell_step(rest.strip("'\""))
        if step is None:
            return None
        verb, target = step
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
