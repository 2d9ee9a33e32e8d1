"""What a shell command does, as a next step: a search for a pattern, or a file it writes.

Keeping only a command's first word makes ``cat > f <<EOF`` a ``bash cat`` and
``sed -i ... f`` a ``bash sed``: the step is really the creation or the edit of
``f``, the same step an editor tool's call is. A ``grep``/``rg``/``find`` is a
search for its pattern, as SWE-agent's ``search_dir``/``find_file`` are, so
the three formats (function calls, text commands, mini-swe-agent's shell) read
one way. Only programs that write what the agent typed count as writing:
``python x.py > out.log`` is a run whose output lands in a file, not an edit.
"""

from __future__ import annotations

import re

from benchmark.activity.shell import (
    REDIRECTS,
    inner_script,
    lines_with_heredocs,
    looks_like_path,
    program_ops,
    simple_commands,
    unwrap,
)

# Programs whose redirect or operand writes text the agent wrote itself.
_WRITERS = frozenset({"cat", "echo", "printf", "tee", "sed", "perl"})
SEARCH_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd"})
# Search options that take the next word as their value (never the pattern).
_VALUED = frozenset(
    {"-A", "-B", "-C", "-m", "-f", "-g", "-t", "-T", "--glob", "--type", "--include", "--exclude"}
)
_FIND_NAME = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename"})
_PYTHON = re.compile(r"python\d?(?:\.\d+)?")
# A literal path a Python script writes: ``open('p', 'w')``, ``Path('p').write_text(``.
_PY_WRITE = re.compile(
    r"""open\(\s*(?P<q>['"])(?P<open>[^'"\n]+)(?P=q)\s*,\s*(?:mode\s*=\s*)?['"][wax]"""
    r"""|Path\(\s*(?P<r>['"])(?P<path>[^'"\n]+)(?P=r)\s*\)\s*\.write_(?:text|bytes)\("""
)
_PY_READ = re.compile(
    r"""open\(\s*(['"])([^'"\n]+)\1\s*(?:,\s*['"]r\w*['"]\s*)?\)"""
    r"""|Path\(\s*(['"])([^'"\n]+)\3\s*\)\s*\.read_(?:text|bytes)\("""
)


def search_pattern(program: str, args: list[str]) -> str | None:
    """The pattern a search program looks for: ``grep``/``rg``'s first operand (or ``-e``),
    ``find``'s ``-name`` value (else the folder it walks); None when there is none."""
    if program == "find":
        for i, arg in enumerate(args[:-1]):
            if arg in _FIND_NAME:
                return args[i + 1]
        operands = [a for a in args if not a.startswith("-")]
        return operands[0] if operands else None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--regexp") and i + 1 < len(args):
            return args[i + 1]
        if arg in _VALUED:
            i += 2
            continue
        if arg == "--" and i + 1 < len(args):
            return args[i + 1]
        if not arg.startswith("-"):
            return arg
        i += 1
    return None


def written_file(command: str) -> tuple[str, str] | None:
    """(``create`` or ``edit``, path) of the first file the command writes with text it
    carries (a heredoc, ``echo``, ``sed -i``, ``tee``, a Python script writing a literal
    path); None when it writes none that way."""
    for line, body in lines_with_heredocs(command):
        for argv, redirects in simple_commands(line):
            argv = unwrap(argv)
            script = inner_script(argv)
            if script is not None:
                found = written_file(script)
                if found:
                    return found
                continue
            if not argv:
                continue
            found = _written_by(argv, redirects, body)
            if found:
                return found
    return None


def _written_by(
    argv: list[str], redirects: list[tuple[str, str]], body: str
) -> tuple[str, str] | None:
    program = argv[0].rsplit("/", 1)[-1]
    if _PYTHON.fullmatch(program):
        return python_write(_inline_script(argv, body))
    if program not in _WRITERS:
        return None
    for op, target in redirects:
        if op in REDIRECTS and looks_like_path(target):
            return ("edit" if op.endswith(">>") else "create"), target
    for kind, path, _added, _removed in program_ops(argv, body):
        if kind in ("write", "edit"):
            return ("create" if kind == "write" else "edit"), path
    return None


def _inline_script(argv: list[str], body: str) -> str:
    """The code a ``python -c CODE`` or ``python - <<EOF`` call runs; "" for a script file."""
    if "-c" in argv[1:-1]:
        return argv[argv.index("-c") + 1]
    operands = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    return body if not operands or operands[0] == "-" else ""


def python_write(code: str) -> tuple[str, str] | None:
    """(``edit`` when the script also reads that path, else ``create``, path) of the first
    literal path an inline Python script writes; None when it writes none."""
    found = _PY_WRITE.search(code)
    if found is None:
        return None
    path = found.group("open") or found.group("path")
    read = any(path in (m.group(2), m.group(4)) for m in _PY_READ.finditer(code))
    read = read or f"'{path}'" in code[: found.start()] or f'"{path}"' in code[: found.start()]
    return ("edit" if read else "create"), path
