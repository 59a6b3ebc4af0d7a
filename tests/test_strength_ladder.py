"""bench/strength.py's ladder against a hostile bot served over gRPC: a bot that answers a card it
does not hold ends the run with one line naming it, not a traceback (a real bot process, the real
engine)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from support import ROOT

CHEAT = textwrap.dedent(
    """
    from take5 import Bot, run

    class Cheat(Bot):
        name = "cheat"

        def pick_card(self, view):
            return 104 if 104 not in view.hand else 1

    run(Cheat())
    """
)


def test_a_remote_bot_that_cheats_stops_the_ladder_cleanly(tmp_path, monkeypatch):
    bot = tmp_path / "cheat.py"
    bot.write_text(CHEAT)
    sock = tmp_path / "cheat.sock"
    server = subprocess.Popen([sys.executable, str(bot), "--listen", f"unix:{sock}"])
    try:
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "strength.py"),
                "ladder",
                "lowest",
                f"grpc:unix:{sock}",
                "--players",
                "2",
                "--deals",
                "1",
                "--jobs",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert (last.startswith("ladder: ") and "cheat.sock" in last) or "104" in last, last


def test_a_bad_time_control_is_one_line():
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "strength.py"),
            "ladder",
            "lowest",
            "random",
            "--control-a",
            "fast",
            "--deals",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("ladder: ") and "Traceback" not in done.stderr
