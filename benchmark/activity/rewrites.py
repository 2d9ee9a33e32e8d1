"""Shell commands that change files without naming a write: ``perl -pi``, ``git checkout --
f``, ``git restore f``, a Python script writing ``open('f', 'w')``, a formatter run on ``f``.

A file such a command changed was not "only read". Where the change is certain
(an in-place edit, a checkout of a path, a literal ``open(path, 'w')``) the file
is edited or written; where a program merely may rewrite its arguments (``black
f.py``, ``python fix.py f.py``) the file is ``unsure``: never gold as read-only,
never claimed as modified either.
"""

from __future__ import annotations

import re

from benchmark.activity.patches import PatchOp

_FILE_LIKE = re.compile(r"\.[A-Za-z][\w-]{0,9}$")
# open('path', 'w') / open("path", mode="a"): a literal path opened for writing.
_OPEN = re.compile(
    r"""\bopen\(\s*[rbuRBU]?(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?[rbuRBU]?(['"])([rwaxbt+]+)\3"""
)
_WRITE_TEXT = re.compile(
    r"""\bPath\(\s*[rbuRBU]?(['"])([^'"\n]+)\1\s*\)\s*\.\s*write_(?:text|bytes)\("""
)
PYTHONS = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$")
# Programs that rewrite the files they are given (with the flag, when one is needed).
_FORMATTERS: dict[str, tuple[str, ...]] = {
    "black": (),
    "isort": (),
    "autopep8": ("-i", "--in-place"),
    "yapf": ("-i", "--in-place"),
    "autoflake": ("-i", "--in-place"),
    "pyupgrade": (),
    "2to3": ("-w", "--write"),
    "prettier": ("--write", "-w"),
    "gofmt": ("-w",),
    "goimports": ("-w",),
    "rustfmt": (),
    "clang-format": ("-i",),
    "eslint": ("--fix",),
    "dos2unix": (),
}
_CHECK_ONLY = frozenset({"--check", "--diff", "--dry-run", "-l", "--list-different"})


def script_writes(source: str) -> list[PatchOp]:
    """Files a Python source writes by literal path: ``open(p, 'w'|'x')`` and
    ``Path(p).write_text(...)`` write it (edit it, when the script also reads it),
    ``open(p, 'a'|'r+')`` edits it."""
    ops: list[PatchOp] = []
    for match in _OPEN.finditer(source):
        mode, path = match.group(4), match.group(2)
        if "w" in mode or "x" in mode:
            ops.append(("edit" if _reads(source, path) else "write", path, "", ""))
        elif "a" in mode or "+" in mode:
            ops.append(("edit", path, "", ""))
    for match in _WRITE_TEXT.finditer(source):
        path = match.group(2)
        ops.append(("edit" if _reads(source, path) else "write", path, "", ""))
    return ops


def _reads(source: str, path: str) -> bool:
    """Whether ``source`` also reads ``path`` (``open(p)``, ``open(p, 'r')``, ``read_text``)."""
    quoted = rf"""(['"]){re.escape(path)}\1"""
    return bool(
        re.search(rf"""\bopen\(\s*{quoted}\s*(?:\)|,\s*(?:mode\s*=\s*)?['"]r?[bt]?['"])""", source)
        or re.search(rf"\bPath\(\s*{quoted}\s*\)\s*\.\s*read_(?:text|bytes)\(", source)
    )


def python_ops(args: list[str], body: str, paths: list[str]) -> list[PatchOp]:
    """A Python run: the writes of an inline script (``-c``, a heredoc); the files a
    script or module is given as arguments may be rewritten (``unsure``)."""
    if "-c" in args[:-1]:
        return script_writes(args[args.index("-c") + 1])
    if body and (not args or args[0] == "-"):
        return script_writes(body)
    if args[:1] == ["-m"] and len(args) > 1:
        return rewritten(args[1], args[2:], paths)
    script = next((a for a in args if not a.startswith("-")), None)
    return [("unsure", p, "", "") for p in paths if p != script]


def rewritten(program: str, args: list[str], paths: list[str]) -> list[PatchOp]:
    """A formatter's files (``black f.py``, ``gofmt -w f.go``, ``ruff format f.py``)."""
    if program == "ruff":
        rewrites = args[:1] == ["format"] or "--fix" in args
    else:
        flags = _FORMATTERS.get(program)
        rewrites = flags is not None and (not flags or any(a in flags for a in args))
    if not rewrites or any(a in _CHECK_ONLY for a in args):
        return []
    return [("unsure", p, "", "") for p in paths]


def in_place_ops(program: str, args: list[str], paths: list[str]) -> list[PatchOp] | None:
    """``perl -pi -e s/a/b/ f`` / ``ruby -i``: the files edited in place, the script given
    with ``-e`` never a file; ``None`` when the command is no in-place edit."""
    if program not in ("perl", "ruby") or not any(re.fullmatch(r"-[a-zA-Z]*i.*", a) for a in args):
        return None
    scripts = {args[i + 1] for i, a in enumerate(args[:-1]) if re.fullmatch(r"-[a-zA-Z]*e", a)}
    return [("edit", p, "", "") for p in paths if p not in scripts]


def git_ops(args: list[str], paths: list[str]) -> list[PatchOp]:
    """``git checkout [rev] -- f``, ``git checkout f.py``, ``git restore f``: the file is
    set back to another version (a branch switch or ``--staged`` changes no file)."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub not in ("checkout", "restore"):
        return []
    staged = any(a in ("--staged", "-S") for a in rest)
    if sub == "restore" and staged and not any(a in ("--worktree", "-W") for a in rest):
        return []
    if "--" in rest:
        named = [p for p in rest[rest.index("--") + 1 :] if p in paths]
    elif sub == "restore":
        named = [p for p in rest if p in paths]
    else:  # without ``--`` a word is a file only when it looks like one (not ``fix/x``)
        named = [p for p in rest if p in paths and _FILE_LIKE.search(p)]
    return [("edit", p, "", "") for p in named]


def scripts_run(found: list[tuple[str, list[str]]]) -> list[str]:
    """The Python script files a command runs (``python fix.py``, ``python3 -u x.py a``)."""
    return [
        script
        for program, args in found
        if PYTHONS.match(program) and not ({"-c", "-m"} & set(args))
        for script in [next((a for a in args if not a.startswith("-")), None)]
        if script and script.endswith(".py")
    ]
