"""The regex identifier harvester: what it finds exactly, and the prose it must not take."""

from __future__ import annotations

import pytest

from benchmark.text.identifiers import KINDS, TOKEN_KINDS, harvest, occurrences, tokens

SESSION = """\
Cloned https://github.com/acme/widgets.git and ran git checkout -b fix/redis-pool.
Commit 3f9a2c1d fixed it; see acme/widgets#412 and PR #57 (thanks @alice-dev).
pip install redis==5.0.1 'urllib3>=2.0.7'
Python 3.11.7, node v20.11.1, release v1.2.0-rc1.
Traceback (most recent call last):
  File "/app/src/cache.py", line 42, in get
ModuleNotFoundError: No module named 'redis'
FAILED tests/test_cache.py::test_get - AssertionError: assert 1 == 2
E       AssertionError: assert 1 == 2
error[E0382]: borrow of moved value
fatal: not a git repository
Edited src/app/config.py, ./scripts/run and /usr/local/bin/tool, then read README.md.
"""


def test_every_kind_found_exactly() -> None:
    found = harvest(SESSION)
    assert found["url"] == ["https://github.com/acme/widgets.git"]
    assert found["sha"] == ["3f9a2c1d"]
    assert found["issue"] == ["acme/widgets#412", "PR #57"]
    assert found["pin"] == ["redis==5.0.1", "urllib3>=2.0.7"]
    assert found["branch"] == ["fix/redis-pool"]
    assert found["handle"] == ["@alice-dev"]
    assert {"3.11.7", "v20.11.1", "v1.2.0-rc1"} <= set(found["version"])
    assert found["path"] == [
        "fix/redis-pool",
        "/app/src/cache.py",
        "tests/test_cache.py",
        "src/app/config.py",
        "./scripts/run",
        "/usr/local/bin/tool",
        "README.md",
    ]
    assert found["error"] == [
        "ModuleNotFoundError: No module named 'redis'",
        "FAILED tests/test_cache.py::test_get - AssertionError: assert 1 == 2",
        "E       AssertionError: assert 1 == 2",
        "error[E0382]: borrow of moved value",
        "fatal: not a git repository",
    ]
    for values in found.values():
        assert all(v in SESSION for v in values)  # verbatim substrings


@pytest.mark.parametrize(
    "prose",
    [
        "Open file: n/a",
        "use and/or here",
        "the I/O layer",
        "return a/b",
        "about 1/2 of them, on 12/31/2024",
        "specify the start/end lines",
        "run git checkout -b",
        "the branch is stale and the branch to use",
    ],
)
def test_prose_is_not_an_identifier(prose: str) -> None:
    assert harvest(prose, ("path", "branch")) == {}


def test_sentence_period_and_blank_lines_stay_out() -> None:
    assert harvest("Created docs/guide/.", ("path",)) == {"path": ["docs/guide/"]}
    assert harvest("Pushed to feature/x-1.", ("path",)) == {"path": ["feature/x-1"]}
    errors = harvest("E\n\nnot an error\n\nValueError: boom", ("error",))["error"]
    assert errors == ["ValueError: boom"]


def test_occurrences_counts_in_first_seen_order() -> None:
    counts = occurrences("b.py a.py b.py\nb.py", ("path",))
    assert list(counts["path"].items()) == [("b.py", 3), ("a.py", 1)]
    assert harvest("b.py a.py b.py", ("path",)) == {"path": ["b.py", "a.py"]}


def test_tokens_are_exact_identifiers_without_error_lines() -> None:
    found = tokens(SESSION)
    assert {"redis==5.0.1", "3f9a2c1d", "src/app/config.py", "@alice-dev"} <= found
    assert not any("ModuleNotFoundError" in t for t in found)
    assert tokens("Nothing exact here, just words and/or n/a.") == set()
    assert set(TOKEN_KINDS) == set(KINDS) - {"error"}


# Strings at the edges of each fast path's candidate positions (see identifiers._STARTS).
TRICKY = [
    "",
    "~/notes/todo and ~/x",
    "~",
    "~ab/cd_e and ~gh/ij_k",
    "src/a.py",
    "/etc/hosts.",
    "a/b#12 (#3) x#4 #5#6 acme/w.x#7.",
    "#1",
    "fixed in PR #9, pull 10, ISSUE #11, Pull\n#12, prpr 5, pr#6",
    "the iſſue #4, İssue 5, ıssue 6, PULL 7 and \u212a",
    "checkout checkout -b feat/x, branch the branch main, origin/origin/dev",
    "git checkout -b -x and branch -",
    "a==1==2.3 b>=1.0 c~=2.1rc1 d@1.2 x@y.z @user e==1.",
    "mail alice@example.com @bob-b @c.d",
    "deadbeef1 cafebabe 1234567 abcdefa0123456789abcdef0123456789abcdef0123",
    "https://x.y/z.httphttps://a.b/c) http:/no",
    "Error: x\n  FAILED t\nE   boom",
    "v1.2.3 1.2 x1.2 1.2.3.4 v2.0-rc1.",
    "xv1.2 (v3.4) v.5.6 .7.8 9.x 10..2 vv1.2 1.2v3.4",
    "a.Py b/C d.e f.PY g.p_y h.a/ i. j.k",
    "caf\u00e9/men\u00fc.py and na\u00efve/path/x",
]


def _random_texts(count: int) -> list[str]:
    import random

    rng = random.Random(7)
    alphabet = list("ab fe19#/.-~@=<>()\n_:PRprIisſuUlLvy") + ["http", "checkout ", "branch "]
    return ["".join(rng.choices(alphabet, k=rng.randint(1, 60))) for _ in range(count)]


def test_fast_path_finds_exactly_what_the_plain_patterns_find() -> None:
    for text in [*TRICKY, *_random_texts(3000)]:
        fast, plain = occurrences(text), occurrences(text, fast=False)
        assert fast == plain, text
        assert [list(v.items()) for v in fast.values()] == [
            list(v.items()) for v in plain.values()
        ], text  # same first-seen order


def test_fast_path_on_generated_sessions() -> None:
    from benchmark.transcript.synthetic import generate

    for seed in (0, 1):
        text = "\n".join(m.render() for m in generate(seed, 40_000).messages)
        fast, plain = occurrences(text), occurrences(text, fast=False)
        assert fast == plain and sum(len(v) for v in fast.values()) > 100
        assert [list(v) for v in fast.values()] == [list(v) for v in plain.values()]


def test_case_folding_table_covers_every_character_the_issue_pattern_folds() -> None:
    """Every non-ASCII character re.IGNORECASE matches with a letter of "pr", "issue",
    "pull" is translated, so the literal search finds the words the pattern does."""
    import re
    import sys

    from benchmark.text.identifiers import _FOLD

    folds = re.compile("(?i)[priusl]")
    extra = {i for i in range(128, sys.maxunicode + 1) if folds.fullmatch(chr(i))}
    assert extra <= set(_FOLD)
    assert all(re.fullmatch(f"(?i){_FOLD[i]}", chr(i)) for i in extra)
