"""The one tool vocabulary, table-driven: each row is a tool call as an agent logs it and
the shell command and file operations every reader of the session finds in it."""

from __future__ import annotations

import json

import pytest

from benchmark.activity.actions import extract
from benchmark.activity.operations import file_ops, is_inspection
from benchmark.activity.vocabulary import tool_kind
from benchmark.transcript.models import Message

# (tool name, arguments, the command it runs or None, [(operation, path)])
SHELLS = [
    ("bash", {"command": "cat src/a.py"}, "cat src/a.py", [("read", "src/a.py")]),
    (
        "Bash",
        {"command": "echo x >> log.txt", "description": "append"},
        None,
        [("edit", "log.txt")],
    ),
    ("shell", {"command": ["bash", "-lc", "head -n 5 a.py"]}, "head -n 5 a.py", [("read", "a.py")]),
    ("container.exec", {"command": ["bash", "-lc", "touch b.py"]}, None, [("touch", "b.py")]),
    ("local_shell", {"command": ["rm", "old.py"]}, "rm old.py", [("delete", "old.py")]),
    ("shell_command", {"command": "sed -n 1,20p a.py", "workdir": "/w"}, None, [("read", "a.py")]),
    (
        "exec_command",
        {"cmd": "tail -f app.log", "yield_time_ms": 1000},
        None,
        [("read", "app.log")],
    ),
    ("exec_command", {"cmd": "tee o.txt < i.txt"}, None, [("read", "i.txt"), ("write", "o.txt")]),
    ("write_stdin", {"session_id": 7, "chars": "cat n.md\n"}, "cat n.md", [("read", "n.md")]),
    ("write_stdin", {"session_id": 7, "chars": ""}, "-", []),
    ("write_stdin", {"session_id": 7, "chars": "\u0003"}, "-", []),
    ("write_stdin", {"session_id": 7, "chars": "y\n"}, "-", []),
    ("write_stdin", {"session_id": 7, "chars": "cat a.py"}, "-", []),  # typed, not entered
    ("run_terminal_cmd", {"command": "grep -n foo a.py", "is_background": False}, None, []),
    ("run_command", {"command": "cp a.py b.py"}, None, [("read", "a.py"), ("write", "b.py")]),
    ("execute_command", {"command": "mv a.py c.py"}, None, [("delete", "a.py"), ("write", "c.py")]),
    ("run_shell_command", {"command": "cat > n.txt <<'EOF'\nhi\nEOF"}, None, [("write", "n.txt")]),
    ("execute_bash", {"command": "sed -i 's/a/b/' x.py"}, None, [("edit", "x.py")]),
    ("terminal", {"input": "nl -ba x.py"}, "nl -ba x.py", [("read", "x.py")]),
    ("mcp__box__run_in_terminal", {"command": "cat m.py"}, None, [("read", "m.py")]),
    (
        "shell",
        {"command": ["sh", "-c", "cat a.py | tee b.py"]},
        None,
        [("read", "a.py"), ("write", "b.py")],
    ),
]
POWERSHELL = [
    ("shell_command", {"command": "Get-Content -Raw src\\app.py"}, [("read", "src\\app.py")]),
    ("shell_command", {"command": "Get-Content -Path 'C:\\w\\a.py' -TotalCount 40"}, None),
    ("shell_command", {"command": "gc README.md | Select-Object -First 20"}, None),
    ("shell_command", {"command": "Get-Content a.py, b.py"}, [("read", "a.py"), ("read", "b.py")]),
    ("shell_command", {"command": "Select-String -Pattern 'TODO' -Path notes.md"}, None),
    ("shell_command", {"command": "Select-String 'TODO' notes.md"}, [("read", "notes.md")]),
    ("shell_command", {"command": "Set-Content -Path out.txt -Value 'hi'"}, [("write", "out.txt")]),
    ("shell_command", {"command": 'Add-Content notes.md "more"'}, [("edit", "notes.md")]),
    ("shell_command", {"command": "'x' | Out-File -FilePath log.txt"}, [("write", "log.txt")]),
    ("shell_command", {"command": "'x' | Out-File log.txt -Append"}, [("edit", "log.txt")]),
    ("shell_command", {"command": "New-Item -ItemType File -Path src\\n.py"}, None),
    ("shell_command", {"command": "New-Item -ItemType Directory -Path src\\pkg"}, []),
    ("shell_command", {"command": "Copy-Item a.py b.py"}, [("read", "a.py"), ("write", "b.py")]),
    ("shell_command", {"command": "Move-Item -Path o.py -Destination n.py"}, None),
    ("shell_command", {"command": "Remove-Item -Force build\\out.js"}, None),
    ("shell_command", {"command": "[IO.File]::WriteAllText('z.txt', $t)"}, [("write", "z.txt")]),
    ("shell", {"command": ["pwsh.exe", "-NoProfile", "-Command", "gc -Raw a.py"]}, None),
    ("shell_command", {"command": 'powershell -NoProfile -Command "Get-Content x.py"'}, None),
    ("shell_command", {"command": "pwsh -c 'Set-Content -Path y.txt -Value 1'"}, None),
]
TOOLS = [
    ("Read", {"file_path": "/w/a.py"}, [("read", "/w/a.py")]),
    ("Write", {"file_path": "/w/b.py", "content": "x = 1\n"}, [("write", "/w/b.py")]),
    ("Edit", {"file_path": "/w/b.py", "old_string": "1", "new_string": "2"}, None),
    (
        "MultiEdit",
        {"file_path": "/w/b.py", "edits": [{"old_string": "a", "new_string": "b"}]},
        None,
    ),
    ("str_replace_editor", {"command": "create", "path": "/w/c.py", "file_text": "y"}, None),
    ("str_replace_based_edit_tool", {"command": "view", "path": "/w/c.py"}, None),
    ("write_to_file", {"path": "d.py", "content": "z"}, [("write", "d.py")]),
    ("replace_in_file", {"path": "d.py", "diff": "..."}, [("edit", "d.py")]),
    ("read_file", {"target_file": "e.py"}, [("read", "e.py")]),
    ("edit_file", {"target_file": "e.py", "code_edit": "..."}, [("edit", "e.py")]),
    ("delete_file", {"target_file": "e.py"}, [("delete", "e.py")]),
    ("mcp__fs__read_file", {"path": "f.py"}, [("read", "f.py")]),
    (
        "apply_patch",
        {"input": "*** Begin Patch\n*** Add File: g.py\n+a\n*** End Patch"},
        [("write", "g.py")],
    ),
]
DEFAULT_KIND = {"Read": "read", "Write": "write", "MultiEdit": "edit", "Edit": "edit"}


def _ops(name: str, args: dict) -> tuple[str | None, list[tuple[str, str]], bool]:
    """The command, (operation, path) pairs and inspection flag readers find in one call."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    messages = [
        Message.model_validate({"role": "user", "content": "go"}),
        Message.model_validate({"role": "assistant", "content": None, "tool_calls": [call]}),
        Message.model_validate({"role": "tool", "tool_call_id": "c1", "content": "done"}),
    ]
    texts = {i: m.render() for i, m in enumerate(messages)}
    (action,) = extract(messages, texts, 0, len(messages))
    ops = [(op.kind, op.path) for op in file_ops([action], texts)]  # decoded, not escaped
    return action.command, ops, is_inspection(action)


@pytest.mark.parametrize(("name", "args", "command", "ops"), SHELLS, ids=lambda v: str(v)[:30])
def test_shell_tools(name, args, command, ops):
    """``command`` None: the call's own command line (a wrapped script for an argv list);
    ``"-"``: keystrokes that enter no command line, so nothing is run."""
    found, found_ops, _ = _ops(name, args)
    if command == "-":
        assert found is None and found_ops == []
        return
    assert tool_kind(name) in ("shell", "stdin")
    assert found == (command or _script(args))
    assert found_ops == ops


def _script(args: dict) -> str:
    value = next(v for k, v in args.items() if k in ("command", "cmd", "chars", "input"))
    return value if isinstance(value, str) else value[-1]


PS_DEFAULTS = {
    "Get-Content -Path 'C:\\w\\a.py' -TotalCount 40": [("read", "C:\\w\\a.py")],
    "gc README.md | Select-Object -First 20": [("read", "README.md")],
    "Select-String -Pattern 'TODO' -Path notes.md": [("read", "notes.md")],
    "New-Item -ItemType File -Path src\\n.py": [("write", "src\\n.py")],
    "Move-Item -Path o.py -Destination n.py": [("delete", "o.py"), ("write", "n.py")],
    "Remove-Item -Force build\\out.js": [("delete", "build\\out.js")],
    "gc -Raw a.py": [("read", "a.py")],
    'powershell -NoProfile -Command "Get-Content x.py"': [("read", "x.py")],
    "pwsh -c 'Set-Content -Path y.txt -Value 1'": [("write", "y.txt")],
}


@pytest.mark.parametrize(("name", "args", "ops"), POWERSHELL, ids=lambda v: str(v)[:40])
def test_powershell_file_operations(name, args, ops):
    command, found, _ = _ops(name, args)
    script = _script(args)
    assert command == script
    assert found == (ops if ops is not None else PS_DEFAULTS[script])


@pytest.mark.parametrize(("name", "args", "ops"), TOOLS, ids=lambda v: str(v)[:30])
def test_file_tools(name, args, ops):
    command, found, _ = _ops(name, args)
    assert command is None
    if ops is None:  # the one path argument, with what the tool (or its sub-command) does
        path = next(v for k, v in args.items() if k in ("file_path", "path"))
        kind = DEFAULT_KIND.get(name) or {"create": "write", "view": "read"}[args["command"]]
        ops = [(kind, path)]
    assert found == ops


@pytest.mark.parametrize(
    ("name", "args", "inspects"),
    [
        ("shell_command", {"command": "Get-Content -Raw a.py | Select-Object -First 5"}, True),
        ("shell_command", {"command": "Get-ChildItem -Recurse | Select-String foo"}, True),
        ("shell_command", {"command": "Set-Content -Path a.py -Value 1"}, False),
        ("shell_command", {"command": "Get-Content a.py; python a.py"}, False),
        ("exec_command", {"cmd": "sed -n 1,40p a.py"}, True),
        ("exec_command", {"cmd": "pytest -q"}, False),
        ("shell", {"command": ["bash", "-lc", "cat a.py && ls"]}, True),
    ],
)
def test_inspections(name, args, inspects):
    assert _ops(name, args)[2] is inspects


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("exec_command", "shell"),
        ("container.exec", "shell"),
        ("functions.shell_command", "shell"),
        ("write_stdin", "stdin"),
        ("Bash", "shell"),
        ("developer__shell", "shell"),
        ("Read", "read"),
        ("NotebookEdit", "edit"),
        ("delete_file", "delete"),
        ("Glob", "search"),
        ("apply_patch", "patch"),
        ("text_editor", "editor"),
        ("update_plan", None),
        ("web_search", None),
    ],
)
def test_tool_kinds(name, kind):
    assert tool_kind(name) == kind
