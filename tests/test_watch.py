"""Watching games in the terminal: `referee match --watch`, `referee replay`, and bots' logs per
turn.

The bots here are real processes served over gRPC by the referee; the hostile one puts terminal
escape sequences, rich markup and floods in its name and its output, and nothing of it may reach the
terminal as anything but inert text.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from support import ROOT

from take5.record import load_record, verify_record
from take5_arena.cli.watch import LiveWatcher, Renderer, safe
from take5_arena.referee.match import botlogs

HEURISTIC = str(ROOT / "example_bots" / "heuristic")
LOWEST = str(ROOT / "example_bots" / "lowest")

CHATTY = """
import sys
from take5 import Bot, run

class Chatty(Bot):
    name = "chatty"

    def pick_card(self, view):
        print(f"turn {view.turn}: thinking about {min(view.hand)}", file=sys.stderr)
        return min(view.hand)

if __name__ == "__main__":
    run(Chatty())
"""

HOSTILE = r"""
import sys
from take5 import Bot, run

class Hostile(Bot):
    name = "evil\x1b[2J\x1b]0;pwned\x07[bold red]boss[/]"

    def pick_card(self, view):
        sys.stderr.write(
            "\x1b[2J\x1b[H\x1b]0;owned\x07 [link=http://x]click[/link] \u202egnp.exe\r fake line\n"
        )
        sys.stderr.write("A" * 10000 + "\n")
        print("stdout too", flush=True)
        return min(view.hand)

if __name__ == "__main__":
    run(Hostile())
"""


def write_bot(tmp_path: Path, name: str, source: str) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(source)
    return str(folder)


def referee(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One short match of the chatty bot and one of the hostile bot, with records (played once)."""
    tmp = tmp_path_factory.mktemp("watch")
    out = {}
    for name, source in (("chatty", CHATTY), ("hostile", HOSTILE)):
        bot = write_bot(tmp, name, source)
        records = tmp / f"{name}-records"
        run = referee(
            "match", bot, HEURISTIC, "--threshold", "15", "--records", str(records), "--watch"
        )
        assert run.returncode == 0, run.stderr
        out[name] = records / "s0-g1.json"
        out[f"{name}-watch"] = run.stdout  # type: ignore[assignment]
    return out


def test_logs_are_kept_per_turn(games) -> None:
    record = load_record(games["chatty"])
    assert verify_record(record) is None  # readers ignore the addition
    for rnd in record["rounds"]:
        for turn in rnd["turns"]:
            logs = turn["logs"]
            assert [seat for seat, _ in logs] == [0]  # the heuristic says nothing
            assert (
                logs[0][1] == f"turn {turn['turn']}: thinking about "
                f"{min(p[1] for p in turn['plays'] if p[0] == 0)}"
            )


def test_hostile_logs_are_bounded_and_inert(games) -> None:
    record = load_record(games["hostile"])
    assert verify_record(record) is None
    turn = record["rounds"][0]["turns"][0]
    [(seat, text)] = turn["logs"]
    assert seat == 0 and len(text) <= botlogs.LIMIT
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\r" not in text
    assert "\\x1b[2J" in text and "\\u202e" in text and "[... cut" in text


def test_watch_shows_the_game_live(games) -> None:
    out = games["chatty-watch"]
    assert "Round 1, turn 1" in out and "Played: " in out and "row 1" in out
    assert "log chatty | turn 1: thinking about" in out
    assert "Result" in out and out.index("Round 1, turn 1") < out.index("Result")
    assert [line.strip() for line in out.splitlines()].count("Result") == 1  # the result once


def test_watch_output_of_a_hostile_bot_is_inert(games) -> None:
    # The watch part only: the match's own summary lines are escaped by the command's report.
    out = games["hostile-watch"].split("\ns0-g1: ")[0]
    assert "Result" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
    assert (
        "[bold red]bos" in out
    )  # markup shown as text (the watch cuts a name at 40 characters, escapes counted)
    assert "[link=http://x]click[/link]" in out


def render(record: dict, *, width: int = 120) -> tuple[str, str]:
    """What a colour terminal would receive (raw, with rich's own escape codes) and the plain
    text."""
    console = Console(
        record=True, force_terminal=True, color_system="truecolor", width=width, file=io.StringIO()
    )
    watcher = LiveWatcher(console)
    watcher(record)
    raw = console.export_text(styles=True, clear=False)
    return raw, console.export_text()


def test_rendering_in_a_colour_terminal_keeps_bot_strings_inert(games) -> None:
    record = load_record(games["hostile"])
    raw, plain = render(record)
    assert "\x1b[" in raw  # the renderer's own colours reach the terminal ...
    for bad in ("\x1b[2J", "\x1b[H", "\x1b]0;", "\x07", "\u202e", "\r"):
        assert bad not in raw, repr(bad)  # ... and nothing the bot wrote does
    assert "\\x1b]0;pwned\\x07" in plain and "[bold red]bos" in plain
    assert "http://x" not in raw.replace("[link=http://x]", "")  # no hyperlink escape made of it


def test_replay_all_and_round(games) -> None:
    run = referee("replay", str(games["chatty"]), "--all")
    assert run.returncode == 0, run.stderr
    assert (
        "Round 1, turn 10" in run.stdout
        and "log chatty | turn 3" in run.stdout
        and "Result" in run.stdout
    )
    one = referee("replay", str(games["chatty"]), "--round", "1")
    assert one.returncode == 0 and "Round 1, turn 1" in one.stdout and "Round 2" not in one.stdout
    missing = referee("replay", str(games["chatty"]), "--round", "99")
    assert (
        missing.returncode == 2
        and "no round 99" in missing.stderr
        and "Traceback" not in missing.stderr
    )


def test_replay_refuses_bad_records(tmp_path: Path, games) -> None:
    assert referee("replay", str(tmp_path / "nothing.json")).returncode == 2
    (tmp_path / "junk.json").write_text("{not json")
    junk = referee("replay", str(tmp_path / "junk.json"))
    assert junk.returncode == 2 and "not JSON" in junk.stderr and "Traceback" not in junk.stderr
    doc = json.loads(Path(games["chatty"]).read_text())
    doc["rounds"][0]["turns"][2]["rows"][0] = [1, 2, 3]  # a forged turn
    doc["seats"][0]["name"] = "\x1b[31mred"
    (tmp_path / "forged.json").write_text(json.dumps(doc))
    forged = referee("replay", str(tmp_path / "forged.json"), "--all")
    assert (
        forged.returncode == 1
        and "does not follow the rules" in forged.stderr
        and forged.stdout == ""
    )


def test_replay_steps_with_enter_in_a_terminal(games) -> None:
    """In a pseudo-terminal: a prompt after each step, Enter for the next, q to stop."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the replay, with the pty as its terminal
        os.chdir(ROOT)
        os.execv(
            sys.executable, [sys.executable, "-m", "take5_arena", "replay", str(games["chatty"])]
        )
    output = b""

    def read_until(marker: bytes, count: int = 1, timeout: float = 60) -> None:
        nonlocal output
        deadline = time.monotonic() + timeout
        while output.count(marker) < count and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    output += os.read(fd, 65536)
                except OSError:
                    return

    try:
        read_until(b"Enter: next turn")
        assert b"Round 1" in output and b"turn 1" not in output  # the round's start, then it waits
        os.write(fd, b"\n")
        read_until(b"Round 1, turn 1")
        read_until(b"Enter: next turn", count=2)
        assert output.count(b"Enter: next turn") == 2
        os.write(fd, b"q\n")
        _, status = os.waitpid(pid, 0)
        read_until(b"\0", timeout=1)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Round 1, turn 2" not in output


def test_safe_is_the_sdk_escaper_as_plain_text() -> None:
    text = safe("a\x1b[0mb\tc\nd\u202e\x7f[bold]e")
    assert text.plain == "a\\x1b[0mb\tc\nd\\u202e\\x7f[bold]e" and not text.spans
    assert (
        botlogs.clean("x" * 5000).endswith("per turn are kept]")
        and len(botlogs.clean("x" * 5000)) <= 2000
    )


def test_renderer_reads_optional_parts_defensively(games) -> None:
    record = load_record(games["chatty"])
    record["seats"] = "nonsense"
    record["faults"] = [[{"round": "1"}], 7]
    record["rounds"][0]["turns"][0]["logs"] = [[0, 5], "x", [99, "far seat"], [True, "bool"]]
    _, plain = render(record)
    assert "seat 0" in plain and "far seat" in plain and "Round 1, turn 1" in plain
    renderer = Renderer(record)
    assert len(list(renderer.steps())) == 1 + sum(len(r["turns"]) for r in record["rounds"])
