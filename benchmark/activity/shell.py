"""File effects of shell commands: ``cat > x <<EOF``, ``sed -i``, ``touch``, ``mv``, ``rm``,
patches fed to ``apply_patch``, ``git apply`` or ``patch``, and the commands of
:mod:`.rewrites` (``git checkout -- f``, ``perl -pi``, Python writing files, formatters)...
(PowerShell in :mod:`.powershell`).

Commands are tokenized with :mod:`shlex` (quotes and operators respected)
line by line; heredoc bodies are taken as the content written (or the patch
applied), never parsed as commands, and so are ``apply_patch`` envelopes.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from benchmark.activity.patches import PatchOp, patch_ops, piped_diff_ops, split_envelopes
from benchmark.activity.powershell import (
    is_powershell,
    powershell_ops,
    powershell_programs,
)
from benchmark.activity.rewrites import PYTHONS, git_ops, in_place_ops, python_ops, rewritten
from benchmark.activity.vocabulary import (
    POSIX_SHELLS,
    POWERSHELLS,
    READ_PROGRAMS,
    WRAPPERS,
    wrapped_script,
)

ShellOp = PatchOp  # (kind, path, added text, removed text)

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_CONTROL = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_PLAIN = re.compile(r"[;&|()<>]+|[^\s;&|()<>]+")
_EXT = re.compile(r"\.[A-Za-z][\w-]{0,9}$")


def looks_like_path(word: str) -> bool:
    """A word that names a file: has an extension or a slash, no globs, no flags, no URL."""
    if not word or word.startswith("-") or "://" in word or any(c in word for c in "*?$`{}<>|;="):
        return False
    if word in (".", "..", "/", "~") or word.startswith("/dev/") or word.startswith("&"):
        return False
    name = word.rstrip("/").rsplit("/", 1)[-1]
    return bool(name) and not name.isdigit() and ("/" in word or bool(_EXT.search(name)))


def lines_with_heredocs(command: str) -> list[tuple[str, str]]:
    """(command line, heredoc body) pairs; the body is ``""`` when there is none."""
    out: list[tuple[str, str]] = []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        marker = _HEREDOC.search(line)
        body: list[str] = []
        if marker:
            while i < len(lines) and lines[i].strip() != marker.group(2):
                body.append(lines[i])
                i += 1
            i += 1
            line = line[: marker.start()] + line[marker.end() :]
        out.append((line, "\n".join(body)))
    return out


def simple_commands(line: str) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """(argv, [(redirect operator, target)]) for each simple command of one line."""
    words = _words(line)
    commands: list[tuple[list[str], list[tuple[str, str]]]] = []
    argv: list[str] = []
    redirects: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _CONTROL:
            if argv:
                commands.append((argv, redirects))
            argv, redirects = [], []
        elif word in REDIRECTS or word in ("<", "2>", ">&"):
            target = words[i + 1] if i + 1 < len(words) else ""
            redirects.append((word, target))
            i += 1
        else:
            argv.append(word)
        i += 1
    if argv:
        commands.append((argv, redirects))
    return commands


def _words(line: str) -> list[str]:
    """Shell words and operators; :mod:`shlex` only when quoting makes it necessary."""
    if not any(c in line for c in "'\"\\#"):
        return _PLAIN.findall(line)
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return line.split()


@lru_cache(maxsize=4096)
def in_powershell(command: str) -> bool:
    """Whether ``command`` is PowerShell; a POSIX heredoc's body (a file being written,
    perhaps a ``.ps1``) is content, never read as the command's own statements."""
    if "<<" in command:
        command = "\n".join(line for line, _ in lines_with_heredocs(command))
    return is_powershell(command)


def programs(command: str) -> list[tuple[str, list[str]]]:
    """(program, args) of every simple command, wrappers and env assignments skipped; the
    programs of a script run by ``bash -c`` or ``pwsh -Command`` count as the command's."""
    if in_powershell(command):
        return powershell_programs(command)
    out: list[tuple[str, list[str]]] = []
    for line, _ in lines_with_heredocs(command):
        for argv, _redirects in simple_commands(line):
            argv = unwrap(argv)
            script = inner_script(argv)
            if script is not None:
                out.extend(programs(script))
            elif argv:
                out.append((argv[0].rsplit("/", 1)[-1], argv[1:]))
    return out


def inner_script(argv: list[str]) -> str | None:
    """The script of ``bash -lc "..."`` or ``powershell -Command "..."``; else ``None``."""
    if not argv:
        return None
    program = argv[0].rsplit("/", 1)[-1].lower()
    if program in POSIX_SHELLS or program in POWERSHELLS:
        return wrapped_script(argv)
    return None


def shell_ops(command: str) -> list[ShellOp]:
    """(kind, path, added text, removed text) for every file a shell command touches,
    in a POSIX shell or in PowerShell (told apart by :func:`in_powershell`)."""
    if in_powershell(command):
        return powershell_ops(command)
    envelopes, command = split_envelopes(command)
    ops: list[ShellOp] = [op for envelope in envelopes for op in patch_ops(envelope)]
    for line, body in lines_with_heredocs(command):
        for argv, redirects in simple_commands(line):
            argv = unwrap(argv)
            for op, target in redirects:
                if op in REDIRECTS and looks_like_path(target):
                    kind = "edit" if op.endswith(">>") else "write"
                    ops.append((kind, target, body or _echoed(argv), ""))
                elif op == "<" and looks_like_path(target):
                    ops.append(("read", target, "", ""))
            script = inner_script(argv)
            if script is not None:
                ops.extend(shell_ops(script))
            elif argv:
                ops.extend(program_ops(argv, body))
    return ops


def unwrap(argv: list[str]) -> list[str]:
    """``argv`` without wrappers (``sudo``, ``env``, ``timeout 60``) and env assignments."""
    while argv:
        if argv[0] in WRAPPERS or re.fullmatch(r"[A-Za-z_]\w*=.*", argv[0]):
            argv = argv[1:]
        elif argv[0] == "timeout":  # ``timeout [-k 5] [-s KILL] 60 cmd``: options, duration
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[2:] if argv[0] in ("-k", "-s") else argv[1:]
            argv = argv[1:]
        else:
            break
    return argv


def _echoed(argv: list[str]) -> str:
    return " ".join(argv[1:]) if argv and argv[0] in ("echo", "printf") else ""


def program_ops(argv: list[str], body: str) -> list[ShellOp]:
    """The file effects of one simple command (its heredoc body as the text it writes)."""
    program, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    paths = [a for a in args if looks_like_path(a)]
    if program in READ_PROGRAMS and not (program == "cat" and body):
        return [("read", p, "", "") for p in paths]
    if program == "sed":
        return _sed_ops(args)
    if program == "touch":
        return [("touch", p, "", "") for p in paths]
    if program == "tee":
        return [("edit" if "-a" in args else "write", p, body, "") for p in paths]
    if program in ("rm", "unlink"):
        return [("delete", p, "", "") for p in paths]
    if program in ("mv", "cp") and len(paths) >= 2:
        first: ShellOp = ("delete" if program == "mv" else "read", paths[0], "", "")
        return [first, ("write", paths[-1], "", "")]
    if program == "git" and args[:1] == ["mv"] and len(paths) >= 2:
        return [("delete", paths[0], "", ""), ("write", paths[-1], "", "")]
    if program == "git" and args[:1] in (["checkout"], ["restore"]):
        return git_ops(args, paths)
    if PYTHONS.match(program):
        return python_ops(args, body, paths)
    in_place = in_place_ops(program, args, paths)
    if in_place is not None:
        return in_place
    return piped_diff_ops(program, args, body) or rewritten(program, args, paths)


def _sed_ops(args: list[str]) -> list[ShellOp]:
    """``sed [-i] [-e script | script] files``: the script is never a file."""
    in_place = any(a == "--in-place" or re.fullmatch(r"-[a-zA-Z]*i.*", a) for a in args)
    scripts: list[str] = []
    files: list[str] = []
    explicit = any(a in ("-e", "--expression") for a in args)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression", "-f") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if not arg.startswith("-"):
            if not explicit and not scripts:
                scripts.append(arg)
            elif looks_like_path(arg):
                files.append(arg)
        i += 1
    script = "\n".join(scripts)
    return [("edit" if in_place else "read", f, script if in_place else "", "") for f in files]
