"""The store on PostgreSQL against SQLite: recording games and reading them back.

    bash scripts/setup-postgres.sh            # a local cluster (prints its URL)
    python bench/store_backends.py            # its URL from scripts/setup-postgres.sh --url
    python bench/store_backends.py --url postgresql://... --games 400

One schedule of ``--games`` two-seat games, recorded one transaction each as a referee records
them (:meth:`Results.record_game`), then read back whole (every record, as standings and verify
read them) and the schedule's progress asked for (as the status page does), on a new SQLite store
(the baseline, in the same run: as `tournament run` writes it, and with an fsync per commit as
`referee serve` writes it) and on a new database of the server (an fsync per commit: its
default). Wall time of each phase and this process's CPU time (the server's own is not counted:
it is another process), with the ratios PostgreSQL / SQLite. The records are real (played by
random players), about 6 kB each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]

from take5 import RandomPlayer, Settings, play_game
from take5.record import GameRecord
from take5_arena.referee.store import Store
from take5_arena.referee.store.health import set_synchronous


def records(n: int) -> list[GameRecord]:
    out = []
    for i in range(n):
        game = play_game([RandomPlayer(i), RandomPlayer(i + 1)], Settings(players=2), i)
        out.append(game.record(game_id=f"g{i}", seats=[{"name": "a"}, {"name": "b"}]))
    return out


def phase(label: str, fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def run(
    directory: Path, url: str | None, games: list[GameRecord]
) -> dict[str, tuple[float, float]]:
    with Store(directory, create=True, url=url) as store:
        a, _ = store.versions.add("a", source_hash="a", bot_dir="/a", kind="python")
        b, _ = store.versions.add("b", source_hash="b", bot_dir="/b", kind="python")
        specs: list[dict[str, Any]] = [
            {
                "game_id": g["game_id"],
                "table": i,
                "rotation": 0,
                "deal_seed": i,
                "duplicate_set": g["game_id"],
                "seats": [a.id, b.id],
                "settings": {},
            }
            for i, g in enumerate(games)
        ]
        store.schedules.save("s", specs, description="bench", settings={}, entrants=["a", "b"])
        figures = {
            "record": phase(
                "record", lambda: [store.results.record_game(str(g["game_id"]), g) for g in games]
            ),
            "read all": phase("read", lambda: sum(1 for _ in store.records.all())),
            "progress x100": phase(
                "progress", lambda: [store.schedules.progress("s") for _ in range(100)]
            ),
        }
    return figures


def new_database(server: str) -> str:
    import psycopg

    name = f"take5_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    parts = urlsplit(server)
    return f"{parts.scheme}://{parts.netloc}/{name}" + (f"?{parts.query}" if parts.query else "")


def drop_database(server: str, url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="the server (default: scripts/setup-postgres.sh --url)")
    parser.add_argument("--games", type=int, default=300)
    args = parser.parse_args()
    server = (
        args.url
        or subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup-postgres.sh"), "--url"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    games = records(args.games)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = run(Path(tmp) / "sqlite", None, games)
        set_synchronous("full")  # as `referee serve` writes: an fsync per commit, as PostgreSQL's
        full = run(Path(tmp) / "sqlite-full", None, games)
        url = new_database(server)
        try:
            postgres = run(Path(tmp) / "postgres", url, games)
        finally:
            drop_database(server, url)
    print(f"{args.games} games of two seats; wall s and this process's CPU s")
    print(
        f"{'phase':<14} {'sqlite wall':>11} {'cpu':>6} {'sqlite full':>11} {'cpu':>6}"
        f" {'postgres':>9} {'cpu':>6} {'pg/sqlite':>9} {'pg/full':>8}"
    )
    for key in sqlite:
        (sw, sc), (fw, fc), (pw, pc) = sqlite[key], full[key], postgres[key]
        print(
            f"{key:<14} {sw:11.3f} {sc:6.3f} {fw:11.3f} {fc:6.3f} {pw:9.3f} {pc:6.3f}"
            f" {pw / sw:9.2f} {pw / fw:8.2f}"
        )


if __name__ == "__main__":
    main()
