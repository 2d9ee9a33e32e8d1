"""Is a phrase worth asking about? Content terms, and phrases cut mid-sentence.

A decision whose choice is "make the necessary edit to the code" or "fix it"
states no decision: nothing in it says what changes. A phrase has content
when it holds an identifier (a path, a code name, a number, anything in
backticks or quotes) or a word that is none of: a function word (article,
pronoun, preposition, conjunction, auxiliary, filler adverb), a verb of
editing in general (make, change, fix, update ... in any simple form), or a
generic noun of code work (code, file, change, issue, logic ...). The lists
are closed word classes plus the vocabulary of "doing the edit", not words
of any one log.

A phrase is cut when it ends mid-sentence: on "..." or a dangling function
word ("because the value of"), inside a code span or bracket it opened
("use `foo("), or where its message ends without terminal punctuation (a log
truncated the text).
"""

from __future__ import annotations

import re

from benchmark.probe.text import balanced


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FUNCTION = _words(
    """
    a an the this that these those it its they them their we us our i me my you your he she
    his her one ones some any all each every both either neither no such other another
    to of in on at for with by from into onto about over under between through after before
    without within per via like up down out off as than then so and or but nor yet if when
    while whether because since though although which who whom whose what where how why
    is are was were be been being am has have had having will would shall should can could
    may might must do does did done not also just now here there again first next still
    accordingly appropriately properly correctly simply only already too very more most
    let's i'll we'll i'd we'd it's that's there's i'm we're you'll
    """
)
_EDIT_VERBS = _words(
    """
    make do apply implement proceed continue go try change edit fix modify update adjust
    handle address solve resolve correct repair tweak amend rework revise alter perform
    carry complete finish start begin work use need want let get put
    """
)
_GENERIC = _words(
    """
    code codes file files change changes edit edits fix fixes modification modifications update
    updates issue issues problem problems bug bugs error errors line lines function functions
    script scripts logic thing things stuff part parts section sections snippet place places
    above below same following necessary needed required relevant appropriate proper correct
    suggested proposed mentioned described corresponding respective right needful
    implementation solution approach way step steps something everything anything
    """
)
_IDENTIFIER = re.compile(r"[`\"/\\_()\[\]{}=<>#@$%0-9]|\w\.\w|\w:\w|[a-z][A-Z]|^'|'$|^[A-Z]{2,}s?$")
_WORD = re.compile(r"[^\s,;]+")
# Words a finished phrase does not end on: articles, prepositions, conjunctions,
# possessives and auxiliaries.
_DANGLING = _words(
    """
    a an the its their our my your his her each every no
    to of in on at for with by from into onto about over under between through after before
    without within per via like as than and or but nor so yet if when while whether because
    since though although which who whose where
    is are was were be been being am has have had will would shall should can could may
    might must does did not
    """
)
_TERMINAL = ".!?:)]}\"'`*"


def _forms(verb: str) -> set[str]:
    """A verb's simple forms: make, makes, made, maked, making, ..."""
    stem = verb[:-1] if verb.endswith("e") else verb
    irregular = {"make": "made", "do": "did", "go": "went", "get": "got", "put": "put"}
    past = {verb + "d" if verb.endswith("e") else verb + "ed", irregular.get(verb, "")}
    return {verb, verb + "s", verb + "es", stem + "ing", verb + "ing", *past} - {""}


_EMPTY = _FUNCTION | _GENERIC | {form for verb in _EDIT_VERBS for form in _forms(verb)}


def has_content(phrase: str) -> bool:
    """Whether ``phrase`` names something: an identifier, or a word beyond generic ones."""
    for word in _WORD.findall(phrase.replace("\u2019", "'")):
        if _IDENTIFIER.search(word.strip(".")):
            return True
        if word.lower().strip(".!?'\"") not in _EMPTY:
            return True
    return False


def is_cut(phrase: str, content: str) -> bool:
    """Whether ``phrase`` (a verbatim slice of ``content``) stops mid-sentence."""
    phrase = phrase.rstrip()
    if not phrase or phrase.endswith(("...", "…", ",", "-", "(")) or not balanced(phrase):
        return True
    words = phrase.split()
    if words[-1].lower() in _DANGLING:
        return True
    text = content.rstrip()
    return text.endswith(phrase) and not text.endswith(tuple(_TERMINAL))
