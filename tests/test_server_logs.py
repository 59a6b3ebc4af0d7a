"""The server's log as an operator reads it: a real `referee serve` process on loopback, its stderr
in both formats (``--log-format text|json``), and the formatters' escaping of hostile text.

Every line must start with a UTC time and a level (text), or be one JSON object with them (json);
no byte a bot chose may reach the log raw (an ESC, a BEL, a newline that would fake a line).
"""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from arena_support import Server, add_author, cli
from support import EXAMPLES, referee

from take5_arena.service import logs

TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) "
)
HOSTILE = "crasher \x1b[2J\x1b]0;pwned\x07 \u202eevil\n2026-01-01T00:00:00.000Z INFO forged"


def _serve(directory: Path, *args: str) -> Server:
    return Server(directory, "--sandbox", "local", "--players", "2", "-j", "1", *args)


def _stopped(server: Server) -> list[str]:
    """Stop the server; every line it wrote (its stderr read to the end)."""
    assert server.stop() == 0, server.log
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "arena stopped" not in server.log:
        time.sleep(0.1)  # the reader thread catches up with the pipe's last lines
    return server.log.splitlines()


def _crasher(tmp_path: Path) -> Path:
    folder = tmp_path / "crasher"
    folder.mkdir()
    (folder / "bot.py").write_text(
        f"import sys\nprint({HOSTILE!r}, file=sys.stderr)\nraise SystemExit({HOSTILE!r})\n"
    )
    return folder


def _arena(tmp_path: Path) -> tuple[Path, str]:
    directory = tmp_path / "T"
    return directory, add_author(directory, "alice")


def _submit(address: str, token: str, folder: Path) -> subprocess.CompletedProcess[str]:
    return cli("submit", str(folder), "--server", address, token=token, timeout=300)


def test_text_log_lines_are_stamped_and_hostile_text_is_inert(tmp_path: Path) -> None:
    """A refused hostile bot, a good one, ladder games, a stop: every line of the server's stderr
    has a UTC time and a level, and the bot's escape sequences and newlines are shown escaped."""
    directory, token = _arena(tmp_path)
    server = _serve(directory, "--log-level", "debug")
    address = server.address
    refused = _submit(address, token, _crasher(tmp_path))
    assert refused.returncode == 3, refused.stdout + refused.stderr
    accepted = _submit(address, token, EXAMPLES / "random")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    server.wait_for(r"INFO submission \S+ \(alice/random\): accepted")
    server.wait_for(r"WARNING ladder: waiting for bots: 1 active")
    lines = _stopped(server)
    assert lines and all(TEXT_LINE.match(line) for line in lines), "\n".join(lines)
    text = "\n".join(lines)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert re.search(r"WARNING --sandbox local runs submitted bots", text)
    assert re.search(r"INFO submission \S+ \(alice/crasher\): refused", text)
    refusal = next(line for line in lines if "(alice/crasher): refused" in line)
    assert "Z INFO forged" not in text.replace(refusal, "")  # the bot's newline faked no line
    assert "INFO arena stopped" in text


def test_json_log_is_one_object_a_line(tmp_path: Path) -> None:
    directory, _token = _arena(tmp_path)
    server = _serve(directory, "--log-format", "json", "--no-ladder")
    server.wait_for(r'"message": "arena serving ')
    lines = _stopped(server)
    entries = [json.loads(line) for line in lines]  # every line: one object
    for entry in entries:
        assert set(entry) >= {"time", "level", "logger", "message"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
    assert any(e["level"] == "WARNING" and "--sandbox local" in e["message"] for e in entries)
    assert entries[-1]["message"].startswith("arena stopped")


def test_bad_log_options_are_one_line_usage_errors(tmp_path: Path) -> None:
    directory, _token = _arena(tmp_path)
    for option in ("--log-format", "--log-level"):
        done = referee("serve", "-t", str(directory), option, "xml")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert option in done.stderr


@pytest.mark.parametrize("format", logs.FORMATS)
def test_formatters_escape_every_message_and_keep_tracebacks_whole(format: str) -> None:
    stream = io.StringIO()
    log = logs.configure(stream, level="info", format=format)
    try:
        log.info("bot said %s", HOSTILE)
        try:
            raise RuntimeError(f"boom {HOSTILE}")
        except RuntimeError:
            logs.logger("ladder").exception("ladder failed (%s)", HOSTILE)
        logging.getLogger("some.library").info("not shown: a library's info")
        logging.getLogger("some.library").warning("a library's warning")
    finally:
        logs.configure(sys.stderr)
    out = stream.getvalue()
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "not shown" not in out and "a library's warning" in out
    lines = out.splitlines()
    if format == "text":
        assert all(TEXT_LINE.match(line) for line in lines), out
        assert not any(line.startswith("2026-01-01") for line in lines)
        assert "\\x1b[2J" in lines[0] and "\\u202e" in lines[0] and "\\x0a" in lines[0]
        assert any("ERROR RuntimeError: boom crasher \\x1b[2J" in line for line in lines)
        assert any("ERROR Traceback (most recent call last):" in line for line in lines)
    else:
        entries = [json.loads(line) for line in lines]
        assert len(entries) == 3
        assert entries[0]["level"] == "INFO" and "\\x1b[2J" in entries[0]["message"]
        assert entries[1]["logger"] == "take5_arena.service.ladder"
        assert entries[1]["level"] == "ERROR" and "RuntimeError: boom" in entries[1]["exc"]
        assert entries[2] == {**entries[2], "level": "WARNING", "logger": "some.library"}
