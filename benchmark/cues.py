"""The words agents use to state a decision, its reason, and an error: one vocabulary.

Read by the probe extractor (``benchmark.probe.decision`` quotes the clauses
these cues introduce, ``benchmark.probe.runs`` the error lines) and by the
offline summarizer (``benchmark.summarizer.sections`` keeps the sentences that
hold them). The phrases both read are written once below; where the two differ
they differ on purpose: a probe needs a cue that ends where the choice begins,
a summary only needs to know that a sentence states a choice with a reason.
"""

from __future__ import annotations

import re

# --- a choice, its reason, the options it rejected ------------------------------------------

_DECISION = r"decision\s*:"
_DECIDE = r"decide\s+(?:to|on)"
_GO_WITH = r"(?:go|going|went)\s+with"
_OPT_SETTLE = r"opt(?:ed|ing)?\s+(?:for|to)|settled?\s+on"
_INSTEAD = r"rather than|instead of"
_REASON = r"because|since|so that|given that"
_REJECTED = r"considered|rejected|ruled out"

# Where a choice begins: "decided to", "going with", "Decision:", "we'll use", "switch X to".
DECISION_CUE = re.compile(
    rf"\b(?:{_DECISION}|decided\s+(?:to|on|that)|{_DECIDE}|{_GO_WITH}|"
    rf"cho(?:se|ose|osing)(?:\s+to)?|{_OPT_SETTLE}|"
    r"(?:we|I|let's|let us)(?:'ll|\s+will|\s+shall)?\s+use|"
    r"switch(?:ed|ing)?\s+(?:[\w`.-]+\s+){0,3}?to)(?:\*\*)?\s*",
    re.I,
)
# A sentence that names a choice (or an option passed over), for a summary to keep.
DECISION_MENTION = re.compile(
    rf"\b(?:{_DECISION}|decided|{_DECIDE}|{_GO_WITH}|chose|choose|{_OPT_SETTLE}|"
    rf"(?:we|I|let's)(?:'ll|\s+will)?\s+use|{_INSTEAD})\b",
    re.I,
)
RATIONALE = re.compile(rf"\b(?:{_REASON})\b|,\s*as\b", re.I)
RATIONALE_MENTION = re.compile(rf"\b(?:{_REASON}|as it|as this)\b", re.I)
# A rationale said in the sentence after the choice.
NEXT_RATIONALE = re.compile(
    r"^(?:this is because|that's because|because|the reason is(?: that)?|the reason:)\s+(.+)$",
    re.I,
)
ALTERNATIVE = re.compile(
    rf"\b(?:{_INSTEAD}|over|as opposed to|(?:I |we )?(?:also )?(?:{_REJECTED}))\b", re.I
)
REJECTED = re.compile(_REJECTED, re.I)  # an alternative named as such, even inside a reason
CONSIDERED = re.compile(rf"\b(?:{_REJECTED})\s+(.+?)(?:[,;:]|\bbut\b|$)", re.I)

# --- a fix: the change announced before an edit, and the fault it answers --------------------

# Verbs of looking, running and creating: "let's open the file" announces no change.
_NOT_CHANGE = (
    r"look|open|check|run|re-?run|see|try|start|begin|inspect|search|find|view|examine|verify|"
    r"test|take|go|proceed|read|review|scroll|navigate|submit|confirm|ensure|make sure|"
    r"reproduce|understand|investigate|locate|explore|print|clean|double-check|know|do|be|"
    r"have|get|keep|wait|create|write|paste|save|now|first|then|also|just|simply"
)
FIX = re.compile(
    r"(?:\b(?:let's|let us|let me|I'll|I will|we'll|we will|I need to|we need to|I should|"
    r"we should|we must|I'm going to|we're going to|I am going to|we are going to)|"
    r"\bthe (?:fix|solution|correct fix|right fix) (?:is|would be|will be) to)\s+"
    r"(?:(?:now|also|simply|just|first|then)\s+)*"
    rf"(?P<choice>(?!(?:{_NOT_CHANGE})\b)[a-z][a-z-]+\b.*)$"
    r"|^(?P<gerund>(?:Adding|Changing|Removing|Replacing|Guarding|Updating|Fixing|Wrapping|"
    r"Moving|Renaming|Converting|Casting|Dropping|Switching|Restoring|Reverting|Normali[sz]ing|"
    r"Handling|Excluding|Including|Initiali[sz]ing|Making|Falling back|Correcting)\b.*)$",
    re.I,
)
PURPOSE = re.compile(
    r"\s+(?:to (?:fix|resolve|address|correct|repair|avoid|prevent|ensure|make sure|solve)|"
    r"so that|in order to|which (?:should|will|would)|and then|and (?:re-?)?run|and try)\b|"
    r"[;:]|\.$",
    re.I,
)
BECAUSE = re.compile(r"\s*,?\s+(?:because|since|given that)\s+|\s*,\s*as\s+", re.I)
LEAD_BECAUSE = re.compile(r"^(?:since|because|as|given that)\s+(?P<why>.{8,}?),?$", re.I)
INSTEAD = re.compile(r"\s*,?\s+(?:instead of|rather than)\s+", re.I)
# A cause named as such ("due to", "the problem is"), and words that say something is wrong.
CAUSE = re.compile(
    r"\b(?:due to|caused by|because of|because|since|"
    r"(?:root cause|problem|issue|bug) is(?: that)?)\s+",
    re.I,
)
FAULT = re.compile(
    r"\b(?:missing|lacks?|lacking|should(?:n't| not| be| have| only)|(?:does|do|did)(?:n't| not)|"
    r"can(?:'t|not)|fails?|failing|never|incorrect(?:ly)?|wrong|undefined|instead of|without|"
    r"(?:is|are|was|were)(?:n't| not)|mismatch|off-by-one)\b",
    re.I,
)

# --- errors in command output and in prose --------------------------------------------------

EXCEPTION = re.compile(
    r"\b(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt|NotFound)):[ \t]*\S"
)
FAILED_LINE = re.compile(r"^\s*(?:FAILED|ERROR)\s+\S.*$|^\s*--- FAIL: \S.*$", re.M)
ERROR_LINE = re.compile(
    r"^\s*(?:error|fatal|Error|ERROR|FATAL)(?:\[\w+\])?:\s*\S.*$|^npm ERR! \S.*$|"
    r"^.*\b(?:No such file or directory|command not found|Permission denied|"
    r"Segmentation fault)\b.*$",
    re.M,
)
ERROR_MARK = re.compile(r"(?:error|fatal)(?:\[\w+\])?:|npm ERR!", re.I)
# A tool's own error reply: Claude Code ``<tool_use_error>``, a reply opening with ``Error:``.
ERROR_REPLY = re.compile(
    r"^\s*(?:<tool_use_error>|(?:error|fatal|failed|failure)(?:\[\w+\])?\s*[:!])|"
    r"^[^\n]*\byour proposed edit has introduced\b",
    re.I,
)
TRACEBACK = re.compile(
    r"^Traceback \(most recent call last\):|^panic: |^thread '.*' panicked", re.M
)
