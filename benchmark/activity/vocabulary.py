"""The one tool vocabulary: which tool names run shell commands, read, write or edit files.

Agents name the same operation many ways: a shell is ``Bash`` (Claude Code),
``shell``/``container.exec``/``local_shell`` with an argv list, ``shell_command``
and ``exec_command`` with a string, ``write_stdin`` keystrokes (Codex),
``run_terminal_cmd`` (Cursor), ``execute_command`` (Cline), ``run_shell_command``
(Gemini CLI)... Every reader of a session (actions, file operations, shell
commands, probes, policies) asks this module, so a name added here is
understood everywhere. Names are matched lowercased, without an MCP or dotted
namespace (``mcp__fs__read_file`` -> ``read_file``, ``container.exec`` -> ``exec``).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Literal

from benchmark.activity.patches import OpKind

ToolKind = Literal["shell", "stdin", "editor", "patch", "write", "edit", "read", "delete", "search"]

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "sh",
        "zsh",
        "terminal",
        "exec",  # ``container.exec``
        "exec_command",
        "shell_command",
        "local_shell",
        "container.exec",
        "run",
        "cmd",
        "powershell",
        "run_shell_command",
        "execute_command",
        "run_command",
        "run_terminal_cmd",
        "run_terminal_command",
        "run_in_terminal",
        "execute_bash",
        "shell_exec",
        "run_bash",
        "bash_exec",
        "terminal_exec",
    }
)
# Keystrokes to a running shell session (Codex ``write_stdin`` after ``exec_command``).
STDIN_TOOLS = frozenset({"write_stdin", "send_stdin", "send_keys", "terminal_input"})
# Words in a tool name that make it a shell when the name is not listed.
SHELL_WORDS = ("bash", "shell", "terminal")
# Argument keys holding the command line: a string, or an argv list (``["bash", "-lc", s]``).
COMMAND_KEYS = ("command", "cmd", "commands", "script", "input", "_raw")
STDIN_KEYS = ("chars", "input", "text", "keys", "data")

WRITE_TOOLS = frozenset(
    {
        "write_file",
        "create_file",
        "write",
        "create",
        "write_to_file",
        "writefile",
        "save_file",
        "new_file",
        "create_new_file",
        "file_write",
    }
)
EDIT_TOOLS = frozenset(
    {
        "edit_file",
        "edit",
        "multiedit",
        "multi_edit",
        "str_replace",
        "replace",
        "replace_in_file",
        "replace_string_in_file",
        "insert_edit_into_file",
        "search_replace",
        "search_and_replace",
        "insert",
        "insert_content",
        "modify_file",
        "update_file",
        "append_file",
        "append_to_file",
        "patch_file",
        "edit_code",
        "file_edit",
        "notebookedit",
    }
)
# One tool, the operation in its ``command`` argument (``create``, ``str_replace``, ``view``).
EDITOR_TOOLS = frozenset(
    {"str_replace_editor", "str_replace_based_edit_tool", "text_editor", "editor", "file_editor"}
)
EDITOR_COMMANDS: dict[str, OpKind] = {
    "create": "write",
    "str_replace": "edit",
    "insert": "edit",
    "view": "read",
    "undo_edit": "edit",
}
READ_TOOLS = frozenset(
    {
        "read_file",
        "read",
        "view",
        "open",
        "cat",
        "view_file",
        "open_file",
        "get_file",
        "read_files",
        "read_many_files",
        "show_file",
        "file_read",
        "readfile",
        "notebookread",
    }
)
DELETE_TOOLS = frozenset({"delete_file", "remove_file", "delete", "rm"})
PATCH_TOOLS = frozenset({"apply_patch", "patch", "applypatch", "apply_diff"})
SEARCH_TOOLS = frozenset(
    {
        "grep",
        "search",
        "glob",
        "find",
        "find_file",
        "search_dir",
        "search_file",
        "search_files",
        "search_file_content",
        "grep_search",
        "ls",
        "list_dir",
        "list_directory",
        "list_files",
        "codebase_search",
        "file_search",
        "goto",
        "scroll_up",
        "scroll_down",
        "filemap",
    }
)
# SWE-agent's interface commands in a text command block; anything else there is shell.
TEXT_COMMANDS = frozenset(
    {
        "create",
        "open",
        "edit",
        "goto",
        "scroll_up",
        "scroll_down",
        "find_file",
        "search_dir",
        "search_file",
        "submit",
        "filemap",
        "insert",
        "str_replace_editor",
    }
)

PATH_KEYS = (
    "path",
    "file_path",
    "filename",
    "file",
    "filepath",
    "target_file",
    "absolute_path",
    "notebook_path",
    "paths",
    "files",
)
OLD_KEYS = ("old_str", "old_string", "search", "old", "old_text", "find")
NEW_KEYS = (
    "new_str",
    "new_string",
    "replace",
    "new",
    "new_text",
    "replacement",
    "insert_text",
    "text",
    "content",
    "file_text",
    "contents",
    "new_source",
)
PATCH_KEYS = ("input", "patch", "diff", "_raw", "content")

# --- programs inside shell commands ---------------------------------------------------------

# POSIX programs whose path arguments are read.
READ_PROGRAMS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "view", "wc"})
# Programs that only show files or state: a command made of them is an inspection.
INSPECT_PROGRAMS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "nl",
        "wc",
        "grep",
        "egrep",
        "rg",
        "ag",
        "ack",
        "find",
        "ls",
        "tree",
        "file",
        "stat",
        "bat",
        "awk",
        "diff",
        "cd",
        "pwd",
        "echo",
        "which",
        "type",
        "du",
        "jq",
        "find_file",
        "search_dir",
        "search_file",
    }
)
# Words before the program that only change how it runs.
WRAPPERS = frozenset({"sudo", "time", "nohup", "env", "command", "exec"})
# ``bash -lc "script"``: a shell running a script given as an argument.
POSIX_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
POWERSHELLS = frozenset({"powershell", "powershell.exe", "pwsh", "pwsh.exe"})

# PowerShell cmdlets (and their aliases) that touch files, by what they do.
PS_READ = frozenset({"get-content", "gc", "type", "cat", "select-string", "sls", "import-csv"})
PS_WRITE = frozenset({"set-content", "sc", "out-file", "new-item", "ni"})
PS_APPEND = frozenset({"add-content", "ac"})
PS_COPY = frozenset({"copy-item", "copy", "cp", "cpi"})
PS_MOVE = frozenset({"move-item", "move", "mv", "mi", "rename-item", "ren", "rni"})
PS_DELETE = frozenset({"remove-item", "rm", "del", "erase", "ri", "rd", "rmdir"})
PS_INSPECT = frozenset(
    {
        "get-content",
        "gc",
        "type",
        "cat",
        "select-string",
        "sls",
        "get-childitem",
        "gci",
        "ls",
        "dir",
        "get-item",
        "gi",
        "test-path",
        "get-location",
        "pwd",
        "set-location",
        "cd",
        "select-object",
        "select",
        "measure-object",
        "measure",
        "format-list",
        "format-table",
        "where-object",
        "where",
        "foreach-object",
        "sort-object",
        "write-output",
        "write-host",
        "echo",
        "out-string",
        "get-filehash",
        "resolve-path",
        "rg",
        "git",
    }
)
# A PowerShell statement: ``Verb-Noun`` with a standard verb.
_CMDLET = re.compile(
    r"(?i)^(?:get|set|add|new|remove|copy|move|rename|select|out|test|write|import|export|"
    r"invoke|start|stop|where|foreach|sort|measure|format|convertto|convertfrom|resolve|"
    r"join|split|clear|push|pop)-[a-z]+$"
)

_INPUT_ANSWERS = frozenset({"", "y", "n", "yes", "no", "q", "quit"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def tool_key(name: str) -> str:
    """A tool name as the vocabulary knows it: lowercased, without a namespace."""
    low = name.lower()
    if low in SHELL_TOOLS:
        return low
    return low.rsplit("__", 1)[-1].rsplit(".", 1)[-1]


def tool_kind(name: str) -> ToolKind | None:
    """What a tool named ``name`` does; ``None`` for a tool that touches no file or shell."""
    tool = tool_key(name)
    for kind, names in _KINDS:
        if tool in names:
            return kind
    if any(word in tool for word in SHELL_WORDS):
        return "shell"
    return None


_KINDS: tuple[tuple[ToolKind, frozenset[str]], ...] = (
    ("shell", SHELL_TOOLS),
    ("stdin", STDIN_TOOLS),
    ("editor", EDITOR_TOOLS),
    ("patch", PATCH_TOOLS),
    ("write", WRITE_TOOLS),
    ("edit", EDIT_TOOLS),
    ("read", READ_TOOLS),
    ("delete", DELETE_TOOLS),
    ("search", SEARCH_TOOLS),
)


def shell_command(name: str, args: dict[str, Any]) -> str | None:
    """The command line a shell tool call runs; ``None`` for any other call.

    An argv list that wraps a script (``["bash", "-lc", s]``, ``["pwsh", "-Command", s]``)
    gives the script, as the model wrote it; other lists are joined. Keystrokes sent
    to a running session count only when they enter a command line, never a bare
    poll (``""``), Ctrl-C or an answer to a prompt.
    """
    kind = tool_kind(name)
    if kind == "stdin":
        return _typed_command(args)
    if kind != "shell":
        return None
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return wrapped_script(value) or shlex.join(value)
    return None


def wrapped_script(argv: list[str]) -> str | None:
    """The script of ``bash -lc s``, ``sh -c s``, ``pwsh -NoProfile -Command s`` ...; else None."""
    if not argv:
        return None
    program = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    if program in POSIX_SHELLS or program.removesuffix(".exe") in POSIX_SHELLS:
        for i, arg in enumerate(argv[1:-1], 1):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                return argv[i + 1]
        return None
    if program in POWERSHELLS:
        for i, arg in enumerate(argv[1:-1], 1):
            if arg.lower() in ("-command", "-c", "-com", "-comm", "-commandwithargs"):
                return " ".join(argv[i + 1 :])
    return None


def _typed_command(args: dict[str, Any]) -> str | None:
    for key in STDIN_KEYS:
        value = args.get(key)
        if not isinstance(value, str):
            continue
        line = value.strip()
        if _CONTROL.search(line) or line.lower() in _INPUT_ANSWERS or line.isdigit():
            return None
        if not value.endswith(("\n", "\r")):
            return None  # typed but not entered
        return line
    return None


def is_cmdlet(word: str) -> bool:
    """``Get-Content``, ``set-content``: a PowerShell ``Verb-Noun`` command."""
    return bool(_CMDLET.match(word))
