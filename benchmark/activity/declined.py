"""Tool calls that never ran: the user rejected them, an approval or a permission was denied.

Claude Code answers a declined call with a ``tool_result`` such as "The user
doesn't want to proceed with this tool use. The tool use was rejected (eg. if
it was a file edit, the new_string was NOT written to the file)...", or
"Permission to use Bash has been denied", or "[Request interrupted by user for
tool use]"; Codex with "exec command rejected by user" / "patch rejected by
user" (an approval declined), and a hook or a sandbox may block a call. The
wording changes between versions, so the meaning is matched (a refusal verb
next to who refused, or the call said not to have run), on the opening of the
result only: output that merely mentions a rejection is not one.
"""

from __future__ import annotations

import re

_HEAD_CHARS = 300
_OPENING_CHARS = 80  # a refusal says so first
_REFUSED = r"(?:rejected|declined|denied|refused|disallowed|blocked|cancell?ed|aborted|vetoed)"
_WHO = r"(?:the\s+)?(?:user|human|operator|reviewer|approver|policy|hook|sandbox|permissions?)"
_DECLINED = re.compile(
    "|".join(
        (
            # "The user doesn't want to proceed / take this action", "user did not approve"
            r"\b(?:user|you)\s+(?:doesn'?t|does\s+not|don'?t|didn'?t|did\s+not)\s+"
            r"(?:want|approve|allow|permit|grant)\b",
            # "... rejected by user", "denied by the sandbox", "blocked by hook"
            rf"\b{_REFUSED}\s+by\s+{_WHO}\b",
            # "user rejected the edit", "the user declined"
            rf"\b{_WHO}\s+(?:has\s+|have\s+)?{_REFUSED}\b",
            # "The tool use was rejected", "command was denied", "permission ... denied"
            r"\b(?:tool\s+(?:use|call)|call|command|patch|edit|write|change|request|action|"
            rf"operation|permission|approval)\b[^.\n]{{0,60}}?\b(?:was|were|has\s+been|is)\s+"
            rf"(?:not\s+(?:approved|allowed|permitted|granted)|{_REFUSED})\b",
            # "[Request interrupted by user for tool use]", "approval denied", "not approved"
            r"interrupted\s+by\s+(?:the\s+)?user",
            rf"\b(?:approval|permission)\s+{_REFUSED}\b",
            # "Rejected: ...", "Denied." as the whole opening
            rf"^\W*{_REFUSED}\b",
        )
    ),
    re.I,
)


# Status lines a harness puts before a tool's output (Codex: "Exit code: 1", "Wall time: ...",
# "Process exited with code 1", "Chunk ID: ...", "Original token count: ...", "Output:").
_STATUS = re.compile(
    r"^\s*(?:exit code:?\s*-?\d+|process exited with code\s*-?\d+|wall time:.*|"
    r"chunk id:.*|original token count:.*|output:|total output lines:.*)\s*$",
    re.I,
)


def declined(result: str) -> bool:
    """Whether a tool's result says the call was rejected, denied or blocked, so it did
    nothing (no file changed, no command ran).

    The refusal opens the result (its first line after any exit-status lines); output
    that quotes one further down (a file read, a grep hit) is no refusal.
    """
    lines = result.strip().splitlines()
    while lines and _STATUS.match(lines[0]):
        lines.pop(0)
    first = lines[0].strip()[:_HEAD_CHARS] if lines else ""
    found = _DECLINED.search(first)
    return found is not None and found.start() < _OPENING_CHARS
