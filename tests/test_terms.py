"""Terms of text (``benchmark.text.terms``): the words retrieval and fact matching share."""

from __future__ import annotations

from benchmark.text.terms import content_of, content_terms, identifier_terms, words


def test_words_split_runs_and_camel_case_parts() -> None:
    assert words("AttributeError in fooBar.baz, HTTPServer") == [
        *("attributeerror", "in", "foobar", "baz", "httpserver"),
        *("attribute", "error", "foo", "bar"),
    ]
    # JSON escapes in tool call arguments separate words.
    assert words('{"code": "x = 1\\ndef f():\\n\\treturn"}') == [
        *("code", "x", "1", "def", "f", "return"),
    ]


def test_words_of_non_ascii_text_lower_each_run_alone() -> None:
    # The Kelvin sign lowercases to an ASCII "k", and a dotted capital I to "i" plus a
    # combining dot; neither is part of an ASCII run, so neither joins a word.
    assert words("\u212aelvin caf\u00e9 \u0130x fooBar") == [
        *("elvin", "caf", "x", "foobar", "foo", "bar"),
    ]


def test_content_terms_drop_stop_words_and_stem() -> None:
    assert content_terms("We created the files and pinned a version") == [
        *("creat", "fil", "pin", "version"),
    ]
    split = words("Which files did we modify?")
    assert content_of(split) == content_terms("Which files did we modify?") == ["fil", "modifi"]


def test_identifier_terms_keep_chunks_with_inner_separators() -> None:
    assert identifier_terms("see src/app/db.py, _private_ and v0.27.2 or plainword") == [
        *("src/app/db.py", "db.py", "v0.27.2"),
    ]
