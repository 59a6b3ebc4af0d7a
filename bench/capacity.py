"""Capacity of the whole arena: games/s of one referee (scheduling, the store, publishing) with
synthetic instant bots on N local Dask workers, N = 1, 2, 4.

The bots are in-process random players (``take5.play_game``, a few milliseconds a game): what is
measured is everything around the game. For each N a fresh tournament of 8 bots at tables of 4 plays
``--games`` games through ``run_tournament`` with the ``dask:local`` executor (a
``distributed.LocalCluster`` of N one-thread worker processes on loopback, what ``--executor
dask:local --concurrency N`` starts), then the site is published incrementally as the ladder does
(every ``--every`` games: the standings computed again and ``write_site`` brings the site up to
date), timed on the same store.

It prints, per N:

* games/s of the run alone (wall) and of the whole arena (run + publishing every ``--every``
  games, the publications' wall time added per game);
* CPU per game of the referee by part: the run's threads (the driver and its store writes; the Dask
  client's event loop, which ships tables and receives records), the standings and the site;
  and the workers' CPU per game (psutil, summed over the worker processes);
* the ratio of games/s to N = 1's (the baseline of the same run).

Where it saturates: on this 2-core machine the workers and the referee share the cores, so games/s
stops growing when their CPU per game times games/s reaches the cores; the referee's own CPU per
game is the bound no number of workers lifts (one referee: several referees are other work).

Run: python bench/capacity.py [--games 400] [--workers 1 2 4]   (a few minutes)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import distributed
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import View, play_game
from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.collection import games_from_records
from take5_arena.leaderboard.results import results_from_records
from take5_arena.leaderboard.site_build import write_site
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import GameOutcome, TableSpec, run_tournament

BOTS = ("ace", "blade", "comet", "dune", "ember", "flint", "gale", "haze")


class Instant:
    """A random legal answer at once."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick_card(self, view: View) -> int:
        return self.rng.choice(view.hand)

    def choose_row(self, view: View) -> int:
        return self.rng.randrange(len(view.rows))

    def draft_card(self, view: View) -> int:
        return min(view.pool)


def instant_runner(spec: TableSpec, on_game: object = None) -> list[GameOutcome]:
    """A table's games with instant bots, records shaped like the match layer's."""
    out = []
    for gid, rotation in spec.games:
        players = [
            Instant(spec.deal_seed % 100_000 + 7 * i + rotation) for i in range(len(spec.seats))
        ]
        game = play_game(players, spec.settings.game, spec.deal_seed, rotation=rotation)
        seats = [
            {
                "name": s.name,
                "entrant": s.key,
                "version": s.version,
                "bot_name": s.name,
                "kind": "python",
                "author": f"{s.name} team",
                "sdk": "take5-python 1.0",
                "protocol_version": 1,
            }
            for s in spec.seats
        ]
        out.append(GameOutcome(gid, game.record(game_id=gid, seats=seats), seconds=0.0))
    return out


def thread_name(native_id: int, names: dict[int, str]) -> str:
    name = names.get(native_id, "other")
    return "main" if name == "MainThread" else name.split("-")[0].rstrip("0123456789_ ")


def one(n: int, games: int, every: int, folder: Path) -> dict[str, float]:
    with Store(folder, create=True) as store:
        for name in BOTS:
            store.versions.add(
                name, source_hash=f"src-{name}", bot_dir=f"/bots/{name}", kind="python"
            )
    settings = {
        "players": 4,
        "sandbox": "local",
        "executor": "dask:local",
        "concurrency": n,
        "duplicate": False,
        "games": games,
        "seed": n,
    }
    me = psutil.Process()
    cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )
    settings["executor"] = f"dask:{cluster.scheduler_address}"
    stop = threading.Event()
    seen: dict[int, float] = {}  # worker process -> CPU seconds
    threads: dict[int, tuple[str, float]] = {}  # referee thread -> (name, CPU seconds)

    def sample() -> None:
        for child in me.children(recursive=True):
            try:
                c = child.cpu_times()
                seen[child.pid] = c.user + c.system
            except psutil.Error:
                pass
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id}
        for t in me.threads():
            if t.id in names or t.id not in threads:
                threads[t.id] = (thread_name(t.id, names), t.user_time + t.system_time)
            else:
                threads[t.id] = (threads[t.id][0], t.user_time + t.system_time)

    sample()
    base_workers = sum(seen.values())
    base_threads = {k: v[1] for k, v in threads.items()}

    def watch() -> None:  # CPU of the worker processes and the referee's threads, while they live
        while not stop.is_set():
            sample()
            stop.wait(0.2)

    watcher = threading.Thread(target=watch, name="watch", daemon=True)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    watcher.start()
    try:
        report = run_tournament(folder, settings, runner=instant_runner)
    finally:
        wall = time.perf_counter() - t0
        run_cpu = time.process_time() - cpu0
        stop.set()
        watcher.join()
        sample()
        cluster.close()
    workers_cpu = sum(seen.values()) - base_workers
    played = games - report.unplayed
    by_thread: dict[str, float] = {}
    for tid, (name, cpu) in threads.items():
        if name != "watch":
            by_thread[name] = by_thread.get(name, 0.0) + cpu - base_threads.get(tid, 0.0)

    # publishing as the ladder does: the standings and the site, every `every` games
    with Store(folder) as store:
        records = dict(store.records.all())
    order = list(records)
    site = folder / "site"
    pub_cpu = std_cpu = pub_wall = 0.0
    count = 0
    for upto in range(every, len(order) + 1, every):
        part = {g: records[g] for g in order[:upto]}
        t = time.perf_counter()
        c = time.process_time()
        results = results_from_records(part)
        standings = compute_standings(results)
        c2 = time.process_time()
        write_site(site, games_from_records(part, results), standings)
        pub_wall += time.perf_counter() - t
        std_cpu += c2 - c
        pub_cpu += time.process_time() - c2
        count += 1
    per = max(count, 1)
    return {
        "played": played,
        "run_gps": played / wall,
        "whole_gps": played / (wall + pub_wall / per * (played / every)),
        "run_cpu": run_cpu / played,
        "workers_cpu": workers_cpu / played,
        "standings": std_cpu / per / every,
        "site": pub_cpu / per / every,
        **{f"thread:{k}": v / played for k, v in by_thread.items() if v > 0.01},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--every", type=int, default=20, help="games between publications")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; {args.games} games per run, publishing every {args.every}")
    base = None
    for n in args.workers:
        folder = Path(tempfile.mkdtemp(prefix=f"take5-capacity-{n}-"))
        try:
            r = one(n, args.games, args.every, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        base = base or r["whole_gps"]
        ms = {k: 1000 * v for k, v in r.items() if k not in ("played", "run_gps", "whole_gps")}
        parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(ms.items()))
        print(
            f"N={n}: {r['run_gps']:.1f} games/s run, {r['whole_gps']:.1f} whole "
            f"({r['whole_gps'] / base:.2f} x N=1); CPU ms/game: {parts}"
        )


if __name__ == "__main__":
    main()
