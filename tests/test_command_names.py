"""A command is named by what tells it apart: never by a first line inline scripts share,
and never by a name another command of the view gets too."""

from __future__ import annotations

import pytest

from benchmark.probe.command_names import command_name

INLINE = 'cd /testbed && python -c "\nimport numpy as np\n{code}\n"'
COMMANDS = [
    INLINE.format(code="print(np.__version__)"),
    INLINE.format(code="from astropy.io import fits\nprint(fits.open('a.fits')[0].header)"),
    "cd /testbed && cat <<'EOF' > repro.py\nimport x\nx.run()\nEOF",
    "cd /testbed && cat <<'EOF' > repro.py\nimport x\nx.run(2)\nEOF",  # the same file again
    "cd /testbed && cat > check.py <<'EOF'\nimport x\nEOF",
    "cd /testbed && python - <<'EOF'\nimport re\ntext = open('a.py').read()\nEOF",
    "cd /testbed\nsource .venv/bin/activate\npython -m pytest tests/test_a.py",
    "cd /testbed && python reproduce.py",
]


@pytest.mark.parametrize(
    ("command", "cue", "quote"),
    [
        (
            COMMANDS[0],
            "the `python` script containing `print(np.__version__)`",
            "print(np.__version__)",
        ),
        (
            COMMANDS[1],
            "the `python` script containing `print(fits.open('a.fits')[0].header)`",
            "print(fits.open('a.fits')[0].header)",
        ),
        (COMMANDS[2], "the command writing `repro.py` with `x.run()`", "x.run()"),
        (
            COMMANDS[4],
            "the command writing `check.py` (`cat > check.py <<'EOF'`)",
            "cat > check.py <<'EOF'",
        ),
        (
            COMMANDS[5],
            "the `python` script containing `text = open('a.py').read()`",
            "text = open('a.py').read()",
        ),
        (
            COMMANDS[6],
            "the command containing `python -m pytest tests/test_a.py`",
            "python -m pytest tests/test_a.py",
        ),
        (COMMANDS[7], "`cd /testbed && python reproduce.py`", "cd /testbed && python reproduce.py"),
    ],
)
def test_named_by_what_tells_it_apart(command: str, cue: str, quote: str) -> None:
    assert command_name(command, COMMANDS) == (cue, quote)
    assert quote in command  # verbatim: it can be cited and stated as a fact


def test_no_two_commands_share_a_name() -> None:
    names = [command_name(c, COMMANDS)[1] for c in COMMANDS]
    assert len(set(names)) == len(COMMANDS)
    for command, name in zip(COMMANDS, names, strict=True):
        assert not any(name in other for other in COMMANDS if other != command)


def test_a_lone_inline_script_is_not_named_by_its_shared_first_line() -> None:
    command = COMMANDS[0]
    cue, quote = command_name(command, [command])
    assert quote == "print(np.__version__)"
    assert "python -c" not in cue
