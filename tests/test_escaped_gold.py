"""Gold and questions say what the log means, not how a rendered call escapes it: Windows
paths keep single backslashes, quotes are plain, and either spelling of an answer matches."""

from __future__ import annotations

import json

from real_shapes import WIN_APP, WIN_CONFIG, claude_code_windows, whole_region_probes

from benchmark.activity.files import PathKeys
from benchmark.judge.matching import exact_match
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import FunctionCall


def _probes(tmp_path):
    transcript = import_file(claude_code_windows(tmp_path)).transcript
    return transcript, whole_region_probes(transcript)


def test_windows_paths_in_gold_and_questions_have_single_backslashes(tmp_path):
    transcript, probes = _probes(tmp_path)
    assert "\\\\" in transcript.messages[1].render()  # the rendered call escapes them
    facts = {f.text for p in probes for f in p.gold.facts}
    assert WIN_CONFIG in facts and WIN_APP in facts  # modified; read
    said = "\n".join(p.question + p.gold.answer + " ".join(facts) for p in probes)
    assert "\\\\" not in said and '\\"' not in said
    assert f"What did we change in `{WIN_CONFIG}`?" in [p.question for p in probes]
    for probe in probes:  # evidence still quotes the message as it is
        for ev in probe.evidence:
            assert ev.quote in transcript.messages[ev.message_index].render()


def test_an_answer_in_either_spelling_matches_the_decoded_gold():
    escaped = json.dumps(WIN_CONFIG)[1:-1]
    assert exact_match(WIN_CONFIG, f"We modified {WIN_CONFIG} only.")
    assert exact_match(WIN_CONFIG, f'{{"file_path": "{escaped}"}}')  # copied from a call
    assert not exact_match(WIN_CONFIG, "We modified C:\\Users\\me\\proj\\src\\config2.py")


def test_paths_are_one_file_whichever_separator_the_log_uses():
    keys = PathKeys()
    assert keys.key(WIN_CONFIG) == keys.key("C:/Users/me/proj/src/config.py")
    assert keys.key("src\\config.py") == keys.key(WIN_CONFIG)


def test_arguments_encoded_twice_are_decoded():
    inner = json.dumps({"file_path": WIN_APP, "old_string": 'a = "x"'})
    call = FunctionCall(name="Edit", arguments=json.dumps(inner))
    assert call.args() == {"file_path": WIN_APP, "old_string": 'a = "x"'}
