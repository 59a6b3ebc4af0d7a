"""Bot strings never reach the operator's terminal raw (issue: terminal injection).

A real bot process whose handshake name, version and author carry ANSI/OSC escapes, a fake newline
forging a referee line and rich markup, and whose errors and stderr carry the same: `referee match`
must print all of it escaped, in the summary, the fault details and the output tail, and in --json.
"""

from __future__ import annotations

import json

from support import ROOT, referee

from take5_arena.referee.match.sanitize import clean_field, clean_text


def test_clean_field_escapes_every_control_character_and_caps():
    text = clean_field("a\x1b[2J\x1b]0;t\x07\nb\r\u202ec\x9b", limit=1000)
    assert text == "a\\x1b[2J\\x1b]0;t\\x07\\x0ab\\x0d\\u202ec\\x9b"
    assert len(clean_field("x" * 10_000)) == 100


def test_clean_text_keeps_lines_and_the_end():
    assert clean_text("one\r\ntwo\x1b[0m\n") == "one\ntwo\\x1b[0m\n"
    assert clean_text("a" * 5000 + "END", limit=100).endswith("END")


def test_a_hostile_handshake_and_output_reach_the_terminal_escaped():
    bot = str(ROOT / "tests" / "bots" / "escapes")
    done = referee(
        "match", bot, str(ROOT / "example_bots" / "random"), "--games", "1", "--max-faults", "1"
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out and "\x9b" not in out
    assert "\\x1b[2J" in out  # shown, escaped, not dropped
    forged = [line for line in out.splitlines() if line.startswith("referee: all bots passed")]
    assert not forged, out

    as_json = referee(
        "match",
        bot,
        str(ROOT / "example_bots" / "random"),
        "--games",
        "1",
        "--max-faults",
        "1",
        "--json",
    )
    assert (
        "\x1b" not in as_json.stdout and "\\u001b" not in as_json.stdout
    )  # not raw, not JSON-escaped raw
    doc = json.loads(as_json.stdout)
    assert "\\x1b[2J" in json.dumps(doc)  # the bot's text, escaped at ingress, is in the result


def test_verify_escapes_what_a_hostile_record_file_brings(tmp_path):
    """A record file is as hostile as a bot: its name and what it holds reach the terminal
    escaped."""
    (tmp_path / "evil\x1b]0;pwned\x07.json").write_text('{"format": "\x1b[2J', encoding="utf-8")
    done = referee("verify", str(tmp_path))
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert "\x1b" not in out and "\x07" not in out, out
    assert "MALFORMED" in out and "\\x1b]0;pwned" in out

    as_json = referee("verify", str(tmp_path), "--json")
    doc = json.loads(as_json.stdout)
    assert doc["checked"] == 1 and doc["valid"] == 0 and doc["records"][0]["status"] == "malformed"
