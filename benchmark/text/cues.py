"""The words agents use to state a decision, its reason, and an error: one vocabulary.

Read by the probe extractor (``benchmark.probe.decision`` quotes the clauses
these cues introduce, ``benchmark.probe.runs`` the error lines) and by the
offline summarizer (``benchmark.summarizer.sections`` keeps the sentences that
hold them). The phrases both read are written once below; where the two differ
they differ on purpose: a probe needs a cue that ends where the choice begins,
a summary only needs to know that a sentence states a choice with a reason.

Each group is a table, name -> pattern, compiled by :func:`_compiled`: a cue is
matched ignoring case unless its entry gives its own flags.
"""

from __future__ import annotations

import re
from collections.abc import Mapping


def _compiled(table: Mapping[str, str | tuple[str, int]]) -> dict[str, re.Pattern[str]]:
    """Each entry compiled: a bare pattern ignoring case, a (pattern, flags) pair as given."""
    out = {}
    for name, entry in table.items():
        pattern, flags = (entry, re.I) if isinstance(entry, str) else entry
        out[name] = re.compile(pattern, flags)
    return out


# --- a choice, its reason, the options it rejected ------------------------------------------

# Phrases several cues share.
_DECISION = r"decision\s*:"
_DECIDE = r"decide\s+(?:to|on)"
_GO_WITH = r"(?:go|going|went)\s+with"
_OPT_SETTLE = r"opt(?:ed|ing)?\s+(?:for|to)|settled?\s+on"
_INSTEAD = r"rather than|instead of"
_REASON = r"because|since|so that|given that"
_REJECTED = r"considered|rejected|ruled out"

DECISION = _compiled(
    {
        # Where a choice begins: "decided to", "going with", "Decision:", "we'll use",
        # "switch X to".
        "cue": (
            rf"\b(?:{_DECISION}|decided\s+(?:to|on|that)|{_DECIDE}|{_GO_WITH}|"
            rf"cho(?:se|ose|osing)(?:\s+to)?|{_OPT_SETTLE}|"
            r"(?:we|I|let's|let us)(?:'ll|\s+will|\s+shall)?\s+use|"
            r"switch(?:ed|ing)?\s+(?:[\w`.-]+\s+){0,3}?to)(?:\*\*)?\s*"
        ),
        # A sentence that names a choice (or an option passed over), for a summary to keep.
        "mention": (
            rf"\b(?:{_DECISION}|decided|{_DECIDE}|{_GO_WITH}|chose|choose|{_OPT_SETTLE}|"
            rf"(?:we|I|let's)(?:'ll|\s+will)?\s+use|{_INSTEAD})\b"
        ),
        "rationale": rf"\b(?:{_REASON})\b|,\s*as\b",
        "rationale_mention": rf"\b(?:{_REASON}|as it|as this)\b",
        # A rationale said in the sentence after the choice.
        "next_rationale": (
            r"^(?:this is because|that's because|because|the reason is(?: that)?|"
            r"the reason:)\s+(.+)$"
        ),
        "alternative": (
            rf"\b(?:{_INSTEAD}|over|as opposed to|(?:I |we )?(?:also )?(?:{_REJECTED}))\b"
        ),
        "rejected": _REJECTED,  # an alternative named as such, even inside a reason
        "considered": rf"\b(?:{_REJECTED})\s+(.+?)(?:[,;:]|\bbut\b|$)",
    }
)

# --- a fix: the change announced before an edit, and the fault it answers --------------------

# Verbs of looking, running and creating: "let's open the file" announces no change.
_NOT_CHANGE = (
    r"look|open|check|run|re-?run|see|try|start|begin|inspect|search|find|view|examine|verify|"
    r"test|take|go|proceed|read|review|scroll|navigate|submit|confirm|ensure|make sure|"
    r"reproduce|understand|investigate|locate|explore|print|clean|double-check|know|do|be|"
    r"have|get|keep|wait|create|write|paste|save|now|first|then|also|just|simply"
)
FIX = _compiled(
    {
        "change": (
            r"(?:\b(?:let's|let us|let me|I'll|I will|we'll|we will|I need to|we need to|"
            r"I should|we should|we must|I'm going to|we're going to|I am going to|"
            r"we are going to)|"
            r"\bthe (?:fix|solution|correct fix|right fix) (?:is|would be|will be) to)\s+"
            r"(?:(?:now|also|simply|just|first|then)\s+)*"
            rf"(?P<choice>(?!(?:{_NOT_CHANGE})\b)[a-z][a-z-]+\b.*)$"
            r"|^(?P<gerund>(?:Adding|Changing|Removing|Replacing|Guarding|Updating|Fixing|"
            r"Wrapping|Moving|Renaming|Converting|Casting|Dropping|Switching|Restoring|"
            r"Reverting|Normali[sz]ing|Handling|Excluding|Including|Initiali[sz]ing|Making|"
            r"Falling back|Correcting)\b.*)$"
        ),
        "purpose": (
            r"\s+(?:to (?:fix|resolve|address|correct|repair|avoid|prevent|ensure|make sure|"
            r"solve)|so that|in order to|which (?:should|will|would)|and then|"
            r"and (?:re-?)?run|and try)\b|[;:]|\.$"
        ),
        "because": r"\s*,?\s+(?:because|since|given that)\s+|\s*,\s*as\s+",
        "lead_because": r"^(?:since|because|as|given that)\s+(?P<why>.{8,}?),?$",
        "instead": r"\s*,?\s+(?:instead of|rather than)\s+",
        # A cause named as such ("due to", "the problem is"), and words that say something
        # is wrong.
        "cause": (
            r"\b(?:due to|caused by|because of|because|since|"
            r"(?:root cause|problem|issue|bug) is(?: that)?)\s+"
        ),
        "fault": (
            r"\b(?:missing|lacks?|lacking|should(?:n't| not| be| have| only)|"
            r"(?:does|do|did)(?:n't| not)|can(?:'t|not)|fails?|failing|never|"
            r"incorrect(?:ly)?|wrong|undefined|instead of|without|"
            r"(?:is|are|was|were)(?:n't| not)|mismatch|off-by-one)\b"
        ),
    }
)

# --- errors in command output and in prose --------------------------------------------------

ERROR = _compiled(
    {
        "exception": (
            r"\b(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt|NotFound))"
            r":[ \t]*\S",
            0,
        ),
        "failed_line": (r"^\s*(?:FAILED|ERROR)\s+\S.*$|^\s*--- FAIL: \S.*$", re.M),
        "line": (
            r"^\s*(?:error|fatal|Error|ERROR|FATAL)(?:\[\w+\])?:\s*\S.*$|^npm ERR! \S.*$|"
            r"^.*\b(?:No such file or directory|command not found|Permission denied|"
            r"Segmentation fault)\b.*$",
            re.M,
        ),
        "mark": r"(?:error|fatal)(?:\[\w+\])?:|npm ERR!",
        # A tool's own error reply: Claude Code ``<tool_use_error>``, a reply opening with
        # ``Error:``.
        "reply": (
            r"^\s*(?:<tool_use_error>|(?:error|fatal|failed|failure)(?:\[\w+\])?\s*[:!])|"
            r"^[^\n]*\byour proposed edit has introduced\b"
        ),
        "traceback": (
            r"^Traceback \(most recent call last\):|^panic: |^thread '.*' panicked",
            re.M,
        ),
    }
)
