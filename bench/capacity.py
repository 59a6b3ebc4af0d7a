"""Capacity of the whole arena: games/s of R referees (1, 2, 4) on one store, with synthetic
instant bots on N local Dask workers (N = 1, 2, 4).

The bots are in-process random players (``take5.play_game``, a few milliseconds a game): what is
measured is everything around the game. For each N one ``distributed.LocalCluster`` of N
one-thread worker processes on loopback is started (what ``--executor dask:local --concurrency N``
starts); for each R a fresh tournament of 8 bots at tables of 4 and ``--games`` games is made on
the store, copied to R-1 more directories as on R hosts (docs/operators/several-hosts.md), and R
referee processes run ``run_tournament`` on it at once, all sending their tables to the same
cluster: each claims a table in the store before it plays it (PostgreSQL's advisory locks), so
every game is played once. With ``--store postgresql://...`` each run gets a new database on that
server (``bash scripts/setup-postgres.sh`` starts one and prints its URL); without it the store is
SQLite and only R = 1 runs (one referee per SQLite file). Then the site is published
incrementally as the ladder does (every ``--every`` games: the standings computed again and
``write_site`` brings the site up to date), timed on the same store, by one publisher.

It prints, per N and R:

* games/s of the run (wall, from the referees' common start to the last one's end) and of the
  whole arena: the run with one publisher beside it, which caps the arena at its own rate;
* CPU per game by part: the referees (sum over their processes; the driver thread, which also
  writes the store, and the Dask client's event loop, by thread), the workers (psutil, summed over
  the worker processes), the PostgreSQL server (all its processes), the standings and the site;
* the ratio of games/s to N = 1, R = 1 (the baseline of the same run).

Where it saturates: on this 2-core machine the workers, the referees and the server share the
cores, so games/s stops growing when their CPU per game times games/s reaches the cores; on more
cores one referee's own CPU per game is its bound, which more referees divide.

Run: python bench/capacity.py --store postgresql://... [--games 200] [--workers 1 2 4]
         [--referees 1 2 4]   (several minutes)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

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
from take5_arena.referee.tournament.run.executors import local_cluster

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


def referee(folder: Path, settings: dict[str, object]) -> None:
    """One referee process (``--referee``): ready once imported, plays on a line on stdin, then
    prints its CPU by thread as JSON."""
    me = psutil.Process()
    threads: dict[int, tuple[str, float]] = {}
    stop = threading.Event()

    def sample() -> None:
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id}
        for t in me.threads():
            name = threads[t.id][0] if t.id in threads and t.id not in names else None
            threads[t.id] = (name or thread_name(t.id, names), t.user_time + t.system_time)

    def watch() -> None:
        while not stop.is_set():
            sample()
            stop.wait(0.2)

    print("ready", flush=True)
    sys.stdin.readline()
    sample()
    base = {k: v[1] for k, v in threads.items()}
    watcher = threading.Thread(target=watch, name="watch", daemon=True)
    cpu0 = time.process_time()
    watcher.start()
    try:
        report = run_tournament(folder, settings, runner=instant_runner)
    finally:
        cpu = time.process_time() - cpu0
        stop.set()
        watcher.join()
        sample()
    by_thread: dict[str, float] = {}
    for tid, (name, c) in threads.items():
        if name != "watch":
            by_thread[name] = by_thread.get(name, 0.0) + c - base.get(tid, 0.0)
    print(json.dumps({"cpu": cpu, "played": report.played, "threads": by_thread}), flush=True)


def new_database(server: str) -> str:
    """A new, empty database on the server of ``server`` (a URL), and its URL."""
    import psycopg

    name = f"take5_capacity_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    parts = urlsplit(server)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}/{name}{query}"


def drop_database(server: str, url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_processes(server: str | None) -> list[psutil.Process]:
    """The PostgreSQL server's processes (the postmaster of the socket's directory and its
    children), to count their CPU; none when the store is SQLite or the server is elsewhere."""
    if server is None:
        return []
    host = dict(p.split("=", 1) for p in urlsplit(server).query.split("&") if "=" in p).get("host")
    pid_file = Path(host or "/nonexistent") / "postmaster.pid"
    try:
        master = psutil.Process(int(pid_file.read_text().split()[0]))
        return [master, *master.children(recursive=True)]
    except (OSError, ValueError, psutil.Error):
        return []


def cpu_of(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        try:
            c = p.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    return total


def publish(folder: Path, every: int) -> tuple[float, float, float]:
    """The ladder's publications every ``every`` games over the store's records: (standings CPU,
    site CPU, wall) per game."""
    with Store(folder) as store:
        records = dict(store.records.all())
    order = list(records)
    site = folder / "site"
    pub_cpu = std_cpu = pub_wall = 0.0
    upto = 0
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
    done = max(upto, 1)
    return std_cpu / done, pub_cpu / done, pub_wall / done


def one(
    cluster: distributed.LocalCluster,
    refs: int,
    games: int,
    every: int,
    folder: Path,
    url: str | None,
    server: str | None,
) -> dict[str, float]:
    with Store(folder, create=True, url=url) as store:
        for name in BOTS:
            store.versions.add(
                name, source_hash=f"src-{name}", bot_dir=f"/bots/{name}", kind="python"
            )
    hosts = [folder]
    for i in range(1, refs):
        copy = folder.with_name(f"{folder.name}-host{i}")
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("run.lock"))
        hosts.append(copy)
    settings = {
        "players": 4,
        "sandbox": "local",
        "executor": f"dask:{cluster.scheduler_address}",
        "concurrency": len(cluster.workers),
        "duplicate": False,
        "games": games,
        "seed": 1,
        "deals": "public",  # the seed's deals: no season key for each host to share
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk")])}
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--referee", str(h), "--settings", json.dumps(settings)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for h in hosts
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    me = psutil.Process()
    ours = {c.pid for c in children}
    workers = [p for p in me.children(recursive=True) if p.pid not in ours]
    seen: dict[int, float] = {}  # server process -> CPU seconds, sampled while it lives
    stop = threading.Event()

    def watch() -> None:  # a session's backend ends with it: sample the server while it runs
        while not stop.is_set():
            for p in server_processes(server):
                try:
                    c = p.cpu_times()
                    seen[p.pid] = c.user + c.system
                except psutil.Error:
                    pass
            stop.wait(0.1)

    watch_server = threading.Thread(target=watch, daemon=True)
    workers0 = cpu_of(workers)
    stop.set()
    watch()  # the server's processes before the start
    pg0 = dict(seen)
    stop.clear()
    watch_server.start()
    t0 = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    reports = []
    for child in children:
        out, _ = child.communicate(timeout=3600)
        reports.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - t0
    stop.set()
    watch_server.join()
    workers_cpu = cpu_of(workers) - workers0
    store_cpu = sum(v - pg0.get(pid, 0.0) for pid, v in seen.items()) if server else math.nan
    with Store(folder) as store:
        played = store.results.recorded_count()
    std, site, pub_wall = publish(folder, every)
    for h in hosts[1:]:
        shutil.rmtree(h, ignore_errors=True)
    by_thread: dict[str, float] = {}
    for r in reports:
        for k, v in r["threads"].items():
            by_thread[k] = by_thread.get(k, 0.0) + v
    run_gps = played / wall
    return {
        "played": played,
        "run_gps": run_gps,
        # one publisher beside the referees: the arena runs at the slower of the two
        "whole_gps": min(run_gps, 1.0 / pub_wall) if pub_wall else run_gps,
        "referees_cpu": sum(r["cpu"] for r in reports) / played,
        "workers_cpu": workers_cpu / played,
        "store_cpu": store_cpu / played,
        "standings": std,
        "site": site,
        **{f"thread:{k}": v / played for k, v in by_thread.items() if v > 0.01},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--referees", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--every", type=int, default=20, help="games between publications")
    ap.add_argument("--store", help="a PostgreSQL server's URL (a new database for each run)")
    ap.add_argument("--referee", help=argparse.SUPPRESS)
    ap.add_argument("--settings", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.referee:
        referee(Path(args.referee), json.loads(args.settings))
        return
    if args.store is None and max(args.referees) > 1:
        ap.error("several referees need a PostgreSQL store: --store postgresql://...")
    print(
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.games} games per run, "
        f"publishing every {args.every}; store: {'PostgreSQL' if args.store else 'SQLite'}"
    )
    base = None
    for n in args.workers:
        cluster = local_cluster(n)
        try:
            for refs in args.referees:
                folder = Path(tempfile.mkdtemp(prefix=f"take5-capacity-{n}-{refs}-"))
                url = new_database(args.store) if args.store else None
                try:
                    r = one(cluster, refs, args.games, args.every, folder, url, args.store)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                    if url is not None:
                        drop_database(args.store, url)
                base = base or r["run_gps"]
                skip = ("played", "run_gps", "whole_gps")
                ms = {k: 1000 * v for k, v in r.items() if k not in skip}
                parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(ms.items()))
                print(
                    f"N={n} R={refs}: {r['run_gps']:.1f} games/s run "
                    f"({r['run_gps'] / base:.2f} x N=1 R=1), {r['whole_gps']:.1f} with one "
                    f"publisher; {int(r['played'])} games; CPU ms/game: {parts}; "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        finally:
            cluster.close()


if __name__ == "__main__":
    main()
