"""How a question names a command: by what tells it apart, quoted verbatim from the call.

Agents wrap most work in the same first line (``cd /testbed && python -c "``,
``python - <<'EOF'``), so a command named by its first line, or by whatever
line follows it, is named the way every other inline script is. A name here
is the work the command does: a file written through a heredoc (``cat >
f <<EOF``), the first line of an inline script that is code of its own (no
import, comment or line another command holds), or the first line that runs
something past the ``cd``/``export`` set-up. The quote is always a verbatim
slice of the command, so it can be cited as evidence and stated as a fact;
no two different commands of a view share one (:func:`command_name`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from benchmark.activity.command_steps import written_file
from benchmark.probe.text import clip

# ``cd /x &&``, ``export A=1;``, ``source venv/bin/activate &&``: set-up before the work.
_SETUP = re.compile(
    r"^(?:(?:cd|pushd|source|\.|export|set)\s+(?:\"[^\"]*\"|'[^']*'|[^\s;&|]+)(?:\s+\S+)*?"
    r"\s*(?:&&|;)\s*)+"
)
_SETUP_LINE = re.compile(r"^(?:cd|pushd|popd|source|\.|export|set|unset)(?:\s|$)")
# Lines of an inline script that say nothing of it: imports, comments, brackets, quotes.
_PLAIN = re.compile(r"^(?:import\s|from\s+\S+\s+import\s|#|['\"`)\]}\s;]*$|EOF\b|end_of_)")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)\w+\1")
_OPEN_END = re.compile(r"(?:\\|&&|\|\||[|(\[{,:])\s*$")
_INLINE = re.compile(r"^\S*(?:python\d?(?:\.\d+)?|node|ruby|perl|php|bash|sh)\b")


def command_name(command: str, others: list[str], limit: int = 100) -> tuple[str, str]:
    """(how a question refers to ``command``, the verbatim slice of it that it quotes);
    ``others`` are the view's other commands, none of which may hold that slice."""
    lines = [line.strip() for line in command.splitlines() if line.strip()]
    if len(lines) <= 1:
        quote = clip(lines[0] if lines else command.strip(), limit)
        return f"`{quote}`", quote
    rest = [o for o in others if o.strip() != command.strip()]

    def unique(text: str) -> bool:
        return len(text) >= 4 and not any(text in other for other in rest)

    work = _SETUP.sub("", lines[0])
    written = written_file(command)
    if written and written[1] in work and unique(work) and _whole(work):
        return f"the command writing `{written[1]}` (`{clip(work, limit)}`)", clip(work, limit)
    program = _INLINE.match(work)
    first = 1 if program or written else 0  # an inline script's or heredoc's first line is shared
    found = _distinct(lines, first, unique, strict=True) or _distinct(lines, first, unique)
    if found is None:
        quote = clip(lines[0], limit)
        return f"`{quote}`", quote
    at, line = found
    quote = clip(line, limit)
    if at == 0:
        return f"`{quote}`", quote
    if written:
        return f"the command writing `{written[1]}` with `{quote}`", quote
    if program:
        name = program.group(0).rsplit("/", 1)[-1]
        return f"the `{name}` script containing `{quote}`", quote
    return f"the command containing `{quote}`", quote


def _distinct(
    lines: list[str], first: int, unique: Callable[[str], bool], strict: bool = False
) -> tuple[int, str] | None:
    """(index, line) of the first line from ``first`` on that is whole work of this command
    alone; ``strict`` also passes over imports, comments and set-up lines."""
    for at in range(first, len(lines)):
        line = lines[at]
        if sum(ch.isalnum() for ch in line) < 4 or not unique(line):
            continue
        if strict and (_PLAIN.match(line) or (_SETUP_LINE.match(line) and not _SETUP.match(line))):
            continue
        if at == 0 and not _whole(line):
            continue
        return at, line
    return None


def _whole(line: str) -> bool:
    """A line that stands on its own: quotes balanced, no continuation at its end, no
    heredoc left open on it."""
    if _HEREDOC.search(line):
        line = _HEREDOC.sub("", line)
    unbalanced = any(line.count(q) % 2 for q in "\"'`")
    return not unbalanced and not _OPEN_END.search(line)
