"""Tournament benchmark: games per second, and schedule creation time.

    python bench/tournament.py                 # everything (docker rows only when an engine answers)
    python bench/tournament.py --no-docker     # local processes only
    python bench/tournament.py --schedule-only

Games per second: the example bots random, lowest, heuristic and random (as a 4th entrant) at tables
of 2 with duplicate deals, at concurrency 1 and 2, each bot a local process (`--sandbox local`) or a
fresh locked-down container per game (`--sandbox docker`), through the whole tournament path
(schedule, store, executor, match layer, one transaction per game). Bot start-up is included: that
is what a tournament pays.

Schedule creation: `referee.tournament.schedule.make_schedule` for 10, 100 and 1,000 entrants at tables of 4,
each entrant at 10 tables (40 games with duplicate deals), best of 3.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.tournament.schedule import make_schedule
from referee.store import Store
from referee.tournament import run_tournament, submit


def bench_schedule() -> None:
    print("schedule creation (tables of 4, 10 tables per entrant, duplicate deals), best of 3:")
    for n in (10, 100, 1000):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            s = make_schedule([f"bot{i:04d}@1" for i in range(n)], table_size=4, games=10 * n, seed=1)
            best = min(best, time.perf_counter() - t0)
        print(f"  {n:>5} entrants: {best * 1000:8.1f} ms  ({len(s.tables)} tables, {len(s.games)} games, {s.mode}, "
              f"pair spread {s.pair_spread}, table spread {s.table_spread})")


def bench_games(sandbox: str, games: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="take5-bench-"))
    try:
        entrants = base / "entrants"
        for name, folder in (("random", "random"), ("lowest", "lowest"), ("heuristic", "heuristic"),
                             ("random2", "random")):
            submit(entrants, ROOT / "example_bots" / folder, name, sandbox=sandbox)
        for concurrency in (1, 2):
            target = base / f"{sandbox}-{concurrency}"
            shutil.copytree(entrants, target)
            t0 = time.perf_counter()
            report = run_tournament(target, {"players": 2, "games": games, "sandbox": sandbox,
                                             "concurrency": concurrency})
            seconds = time.perf_counter() - t0
            with Store(target) as store:
                faults = store.db.execute("SELECT COUNT(*) FROM seat_results WHERE faults != '[]'").fetchone()[0]
            print(f"  {sandbox:>6}, concurrency {concurrency}: {report.played / seconds:6.2f} games/s "
                  f"({report.played} games in {seconds:.1f} s, {faults} seats with faults)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--schedule-only", action="store_true")
    parser.add_argument("--games", type=int, default=24, help="games per measurement (default 24)")
    args = parser.parse_args()
    bench_schedule()
    if args.schedule_only:
        return
    print(f"games per second (4 example bots, tables of 2, duplicate deals, {args.games} games):")
    bench_games("local", args.games)
    if not args.no_docker:
        from referee.sandbox.engine import engine_answers

        if engine_answers():
            bench_games("docker", args.games)
        else:
            print("  docker: skipped (no engine answers; scripts/setup-docker.sh)")


if __name__ == "__main__":
    main()
