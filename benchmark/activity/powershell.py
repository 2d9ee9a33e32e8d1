"""File effects of PowerShell commands (Codex and others on Windows).

``Get-Content -Raw x``, ``Select-String -Path x``, ``Set-Content``, ``Add-Content``,
``Out-File``, ``New-Item -ItemType File``, ``Copy-Item``, ``Move-Item``,
``Remove-Item``, their aliases, ``>``/``>>`` and ``[IO.File]::WriteAllText``.
PowerShell quoting differs from POSIX (a backslash is a path separator, not an
escape; ``@' ... '@`` is a here-string), so it has its own small tokenizer.
Content piped or passed with ``-Value`` (a literal, a here-string, or a
variable assigned one) is kept as the text written.
"""

from __future__ import annotations

import re

from benchmark.activity.patches import PatchOp
from benchmark.activity.vocabulary import (
    POWERSHELLS,
    PS_APPEND,
    PS_COPY,
    PS_DELETE,
    PS_MOVE,
    PS_READ,
    PS_WRITE,
    is_cmdlet,
    wrapped_script,
)

Token = tuple[str, str]  # (kind: "word" | "string" | "op", text)

_TOKEN = re.compile(
    r"""(?P<here>@(?P<q>['"])[ \t]*\r?\n(?P<body>.*?)\r?\n(?P=q)@)"""
    r"""|'(?P<single>(?:[^']|'')*)'"""
    r'''|"(?P<double>(?:[^"`]|`.)*)"'''
    r"""|(?P<op>\r?\n|&&|\|\||[;|(){}]|\d?>>|[*\d]?>(?!&)|2>&1)"""
    r"""|(?P<word>[^\s;|(){}'"<>]+)""",
    re.S,
)
_SEPARATORS = frozenset({"\n", "\r\n", ";", "&&", "||", "(", ")", "{", "}"})
_PATH_PARAMS = frozenset({"path", "literalpath", "lp", "pspath", "filepath", "fullname"})
_DEST_PARAMS = frozenset({"destination", "newname"})
_VALUE_PARAMS = frozenset({"value", "inputobject"})
# Parameters that take no value.
_SWITCHES = frozenset(
    {
        "raw",
        "force",
        "append",
        "nonewline",
        "recurse",
        "wait",
        "asbytestream",
        "simplematch",
        "casesensitive",
        "list",
        "quiet",
        "noclobber",
        "whatif",
        "confirm",
        "passthru",
        "notmatch",
        "allmatches",
        "container",
        "leaf",
    }
)
_NOT_FILES = frozenset({"directory", "dir", "d", "symboliclink", "junction", "hardlink"})
_DOTNET = re.compile(
    r"\[(?:System\.)?IO\.File\]::(?P<method>\w+)\(\s*(?P<q>['\"])(?P<path>[^'\"]+)(?P=q)", re.I
)
_DOTNET_KINDS = {
    "readalltext": "read",
    "readalllines": "read",
    "readallbytes": "read",
    "writealltext": "write",
    "writealllines": "write",
    "writeallbytes": "write",
    "appendalltext": "edit",
    "appendalllines": "edit",
    "delete": "delete",
}
_EXT = re.compile(r"\.[A-Za-z][\w-]{0,9}$")


def is_powershell(command: str) -> bool:
    """A command written in PowerShell: a statement starts with a ``Verb-Noun`` cmdlet,
    or it uses a here-string or a .NET file call."""
    if re.search(r"@['\"][ \t]*\r?\n", command) or _DOTNET.search(command):
        return True
    return any(args and _is_ps_head(args[0][1]) for args, _ in _statements(command))


def _is_ps_head(word: str) -> bool:
    if word.lower() in _PS_ONLY_ALIASES:
        return True
    return is_cmdlet(word) and (word[0].isupper() or word.lower() in _KNOWN)


# Aliases no POSIX system has as a program, so they mark the command as PowerShell.
_PS_ONLY_ALIASES = frozenset({"gc", "sls", "gci", "ni", "cpi", "mi", "rni", "ri"})


_KNOWN = PS_READ | PS_WRITE | PS_APPEND | PS_COPY | PS_MOVE | PS_DELETE


def looks_like_ps_path(word: str) -> bool:
    """A word naming a file: an extension or a separator, no wildcard, variable or flag."""
    if not word or word.startswith(("-", "$", "@")) or any(c in word for c in "*?`{}<>|;=,"):
        return False
    if "://" in word or word in (".", "..", "\\", "/", "~"):
        return False
    name = re.split(r"[\\/]", word.rstrip("\\/"))[-1]
    has_sep = "/" in word or "\\" in word
    return bool(name) and not name.isdigit() and (has_sep or bool(_EXT.search(name)))


def powershell_programs(command: str) -> list[tuple[str, list[str]]]:
    """(cmdlet lowercased, argument words) of every pipeline stage."""
    return [
        (args[0][1].lower(), [t for _, t in args[1:]])
        for args, _ in _statements(command)
        if args and args[0][0] == "word"
    ]


def powershell_ops(command: str) -> list[PatchOp]:
    """(kind, path, added text, removed text) for every file a PowerShell command touches."""
    ops: list[PatchOp] = []
    variables: dict[str, str] = {}
    for match in _DOTNET.finditer(command):
        kind = _DOTNET_KINDS.get(match.group("method").lower())
        if kind and looks_like_ps_path(match.group("path")):
            ops.append((kind, match.group("path"), "", ""))  # type: ignore[arg-type]
    for stage, piped in _statements(command):
        if len(stage) >= 3 and stage[0][1].startswith("$") and stage[1][1] == "=":
            if stage[2][0] == "string" and len(stage) == 3:
                variables[stage[0][1].lower()] = stage[2][1]
            continue
        ops.extend(_stage_ops(stage, _content(piped, variables), variables))
    return ops


def _statements(command: str) -> list[tuple[list[Token], list[Token]]]:
    """(pipeline stage, the stage piped into it) with redirections kept as op tokens."""
    out: list[tuple[list[Token], list[Token]]] = []
    stage: list[Token] = []
    previous: list[Token] = []
    for token in _tokens(command):
        kind, text = token
        if kind == "op" and (text in _SEPARATORS or text == "|"):
            if stage:
                out.append((stage, previous))
            previous = stage if text == "|" else []
            stage = []
        else:
            stage.append(token)
    if stage:
        out.append((stage, previous))
    return out


def _tokens(command: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(command):
        if match.group("here") is not None:
            tokens.append(("string", match.group("body")))
        elif match.group("single") is not None:
            tokens.append(("string", match.group("single").replace("''", "'")))
        elif match.group("double") is not None:
            tokens.append(("string", match.group("double")))
        elif match.group("op") is not None:
            tokens.append(("op", match.group("op")))
        else:
            tokens.append(("word", match.group("word")))
    return tokens


def _content(stage: list[Token], variables: dict[str, str]) -> str:
    """The text a stage outputs when it is only a literal or a variable holding one."""
    words = [t for t in stage if t[0] != "op"]
    if words and words[0][1].lower() in ("echo", "write-output") and len(words) == 2:
        words = words[1:]
    if len(words) != 1:
        return ""
    kind, text = words[0]
    return text if kind == "string" else variables.get(text.lower(), "")


def _parse(stage: list[Token]) -> tuple[dict[str, str], list[str], list[tuple[str, str]]]:
    """(named parameters, positional arguments, redirections) of one stage after the cmdlet."""
    named: dict[str, str] = {}
    positional: list[str] = []
    redirects: list[tuple[str, str]] = []
    stage = _arrays(stage)
    i = 1
    while i < len(stage):
        kind, text = stage[i]
        nxt = stage[i + 1][1] if i + 1 < len(stage) else ""
        if kind == "op":
            redirects.append((text, "" if text == "2>&1" else nxt))
            i += 1 if text == "2>&1" else 2
            continue
        if kind == "word" and re.fullmatch(r"-[A-Za-z][\w]*(:.*)?", text):
            name, _, value = text[1:].partition(":")
            name = name.lower()
            if value or name in _SWITCHES:
                named[name] = value or "true"
                i += 1
            else:
                named[name] = nxt
                i += 2
            continue
        positional.append(text)
        i += 1
    return named, positional, redirects


def _arrays(stage: list[Token]) -> list[Token]:
    """``a.py, b.py`` as one argument ``a.py,b.py`` (a PowerShell array)."""
    out: list[Token] = []
    for kind, text in stage:
        joined = out and out[-1][0] != "op" and kind != "op"
        if joined and (out[-1][1].endswith(",") or text.startswith(",")):
            out[-1] = (out[-1][0], out[-1][1] + text)
        else:
            out.append((kind, text))
    return out


def _stage_ops(stage: list[Token], piped: str, variables: dict[str, str]) -> list[PatchOp]:
    if not stage or stage[0][0] != "word":
        return []
    cmdlet = stage[0][1].lower()
    if cmdlet in ("&", "."):
        return _stage_ops(stage[1:], piped, variables)
    named, positional, redirects = _parse(stage)
    ops: list[PatchOp] = []
    for op, target in redirects:
        if op.endswith(">") and op != "2>" and looks_like_ps_path(target):
            ops.append(("edit" if op.endswith(">>") else "write", target, "", ""))
    if cmdlet.rsplit("\\", 1)[-1] in POWERSHELLS:
        script = wrapped_script([cmdlet] + [t for _, t in stage[1:]])
        return ops + (powershell_ops(script) if script else [])
    paths = _paths(named, positional)
    value = named.get("value") or named.get("inputobject") or ""
    text = variables.get(value.lower(), value) if value.startswith("$") else value
    if cmdlet in ("select-string", "sls"):
        given = _split(next((v for k, v in named.items() if k in _PATH_PARAMS), ""))
        rest = positional[1:] if "pattern" not in named else positional
        return ops + [("read", p, "", "") for p in given or [w for r in rest for w in _split(r)]]
    if cmdlet in PS_READ:
        return ops + [("read", p, "", "") for p in paths]
    if cmdlet in ("new-item", "ni"):
        if named.get("itemtype", "file").lower() in _NOT_FILES:
            return ops
        target = named.get("name") or (paths[0] if paths else "")
        return ops + ([("write", target, text, "")] if looks_like_ps_path(target) else [])
    if cmdlet in PS_WRITE or cmdlet in PS_APPEND:
        content = text or (positional[1] if len(positional) > 1 else "") or piped
        append = cmdlet in PS_APPEND or "append" in named
        return ops + [("edit" if append else "write", p, content, "") for p in paths[:1]]
    if cmdlet in PS_DELETE:
        return ops + [("delete", p, "", "") for p in paths]
    if cmdlet in PS_COPY or cmdlet in PS_MOVE:
        dest = next((v for k, v in named.items() if k in _DEST_PARAMS), "")
        dest = dest or (positional[1] if len(positional) > 1 else "")
        source = paths[:1]
        if not source or not looks_like_ps_path(dest):
            return ops
        first = "read" if cmdlet in PS_COPY else "delete"
        return ops + [(first, source[0], "", ""), ("write", dest, "", "")]  # type: ignore[list-item]
    return ops


def _paths(named: dict[str, str], positional: list[str]) -> list[str]:
    given = next((v for k, v in named.items() if k in _PATH_PARAMS), None)
    words = [given] if given is not None else positional[:1]
    return [p for w in words for p in _split(w)]


def _split(value: str) -> list[str]:
    """``a.py,b.py`` (a PowerShell array) -> its paths."""
    return [p.strip() for p in value.split(",") if looks_like_ps_path(p.strip())]
