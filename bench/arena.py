"""Arena service benchmark: submissions accepted per second while the ladder plays, and the ladder's
games per second against `referee tournament run` on the same bots.

    python bench/arena.py                       # local bots (--sandbox local), a 40 s ladder window
    python bench/arena.py --sandbox docker      # containers (needs an engine and the base images)
    python bench/arena.py --window 60 --submissions 8 --games 40

Bots: the example bots random, lowest, heuristic and random again (as a 4th entrant), tables of 2,
concurrency 1, as in bench/tournament.py.

* Baseline: `run_tournament` (the code of `referee tournament run`) on the four bots, ``--games``
  games; games/s from its wall time.
* Arena: a real `referee serve` process; the four bots are submitted through the real client. Once
  every gauntlet is played, the ladder's games/s is measured over ``--window`` seconds from the
  store's finish times. Then ``--submissions`` new versions of a bot are submitted, 2 at a time,
  while the ladder plays: accepted submissions per second (upload, record, unpack, validation with
  its two smoke games) and the ladder's games/s meanwhile.

A submission is dominated by its validation (starting the bot and playing two smoke games), so the
figure to compare it with is the time of one local `referee submit`, printed too.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]

from take5_arena.referee.tournament import TournamentError, run_tournament, submit
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import ArenaClient, pack_folder

BOTS = (
    ("random", "random"),
    ("lowest", "lowest"),
    ("heuristic", "heuristic"),
    ("random2", "random"),
)
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")]),
}


def finished_times(directory: Path, since: float | None = None) -> list[float]:
    con = sqlite3.connect(f"file:{directory / 'tournament.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        stamps = [
            datetime.fromisoformat(r[0]).timestamp()
            for r in con.execute("SELECT finished_at FROM results")
        ]
    finally:
        con.close()
    return sorted(t for t in stamps if since is None or t >= since)


def pending_ladder_games(directory: Path) -> int:
    con = sqlite3.connect(f"file:{directory / 'tournament.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        return int(con.execute("SELECT COUNT(*) FROM games WHERE status = 'pending'").fetchone()[0])
    finally:
        con.close()


def baseline(base: Path, sandbox: str, games: int) -> float:
    entrants = base / "baseline"
    t0 = time.perf_counter()
    for name, folder in BOTS:
        try:
            submit(entrants, ROOT / "example_bots" / folder, name, sandbox=sandbox)
        except TournamentError as error:  # e.g. a machine too loaded for the bots to start in time
            raise SystemExit(f"bench/arena.py: cannot submit {name} here: {error}") from None
    per_submit = (time.perf_counter() - t0) / len(BOTS)
    print(f"local `referee submit` (validation): {per_submit:.2f} s per bot")
    t0 = time.perf_counter()
    report = run_tournament(
        entrants, {"players": 2, "games": games, "sandbox": sandbox, "concurrency": 1}
    )
    seconds = time.perf_counter() - t0
    rate = report.played / seconds
    print(f"tournament run: {report.played} games in {seconds:.1f} s: {rate:.2f} games/s")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=["local", "docker"], default="local")
    parser.add_argument(
        "--window", type=float, default=40.0, help="seconds of ladder play measured"
    )
    parser.add_argument("--games", type=int, default=40, help="games of the baseline tournament")
    parser.add_argument("--submissions", type=int, default=6)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="take5-bench-arena-"))
    server = None
    try:
        base_rate = baseline(base, args.sandbox, args.games)

        arena = base / "arena"
        token = subprocess.run(
            [
                sys.executable,
                "-m",
                "take5_arena",
                "authors",
                "add",
                "bench",
                "-t",
                str(arena),
                "--per-hour",
                "10000",
                "--max-bots",
                "100",
            ],
            capture_output=True,
            text=True,
            env=ENV,
            check=True,
        ).stdout.strip()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "take5_arena",
                "serve",
                "-t",
                str(arena),
                "--listen",
                "127.0.0.1:0",
                "--sandbox",
                args.sandbox,
                "--players",
                "2",
                "-j",
                "1",
                "--publish-every-games",
                "50",
                "--publish-every-seconds",
                "30",
                "--bootstrap",
                "20",
                "--validators",
                "2",
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=ENV,
            start_new_session=True,
        )
        assert server.stderr is not None
        address = None
        for line in server.stderr:
            m = re.search(r"on (127\.0\.0\.1:\d+)", line)
            if m:
                address = m.group(1)
                break
        if address is None:
            raise SystemExit("the server did not start")
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()  # type: ignore[union-attr]
        client = ArenaClient(address, token=token)
        for name, folder in BOTS:
            reply = client.submit(name, pack_folder(ROOT / "example_bots" / folder))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        deadline = time.time() + 600
        while pending_ladder_games(arena) and time.time() < deadline:  # the gauntlets
            time.sleep(1)
        t0 = time.time()
        time.sleep(args.window)
        played = finished_times(arena, since=t0)
        ladder_rate = len(played) / args.window
        print(
            f"arena ladder: {len(played)} games in {args.window:.0f} s: {ladder_rate:.2f} games/s "
            f"({ladder_rate / base_rate:.2f} x tournament run)"
        )

        versions: list[Path] = []
        for i in range(args.submissions):
            changed = base / f"v{i}" / "changing"
            changed.mkdir(parents=True)
            text = (ROOT / "example_bots" / "random" / "bot.py").read_text()
            (changed / "bot.py").write_text(text + f"\n# version {i}\n")
            versions.append(changed)
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(lambda f: client.submit("changing", pack_folder(f)), versions))
        seconds = time.time() - t0
        accepted = sum(r.outcome == pb.SUBMIT_ACCEPTED for r in replies)
        during = finished_times(arena, since=t0)
        print(
            f"submissions while the ladder plays: {accepted} of {len(replies)} accepted in "
            f"{seconds:.1f} s: {accepted / seconds:.2f} submissions/s "
            f"({seconds / max(1, accepted):.2f} s each); ladder meanwhile "
            f"{len(during) / seconds:.2f} games/s"
        )
        client.close()
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
