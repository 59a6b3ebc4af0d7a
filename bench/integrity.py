"""What checking the results table against the records costs `referee standings`.

    python bench/integrity.py                      # 1,000 games
    python bench/integrity.py --sizes 1000 10000   # (stores cached as bench/leaderboard.py's)

Before it rates a store, ``referee standings`` now checks that every seat_results row follows from
its record (take5_arena/referee/store/integrity.py), which reads every record once. For each size,
in this process, CPU time (``time.process_time``) of:

* ``check``: ``integrity.findings(store)`` over the whole store (it must find nothing);
* ``standings``: what standings computes after the check: ``results_from_store`` and
  ``compute_standings`` (200 bootstrap replicates, as bench/leaderboard.py);
* baseline ``parse``: reading and parsing every record once (``store.records.all()``), the plainest
  way to read what the check reads.

The stores are bench/leaderboard.py's (8 bots, tables of 4, duplicate deals, played in-process).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT / "bench"))

from leaderboard import BOOTSTRAP, cached_store  # bench/leaderboard.py

from take5_arena.leaderboard.board import compute_standings
from take5_arena.referee.store import Store
from take5_arena.referee.store.integrity import findings
from take5_arena.standings import results_from_store


def cpu(work: object) -> float:
    """CPU seconds of calling ``work`` (a no-argument callable)."""
    assert callable(work)
    start = time.process_time()
    work()
    return time.process_time() - start


def run(size: int, cache: Path) -> None:
    folder = cached_store(cache, size)
    with Store(folder, readonly=True) as store:
        found: list[object] = []
        check = cpu(lambda: found.extend(findings(store)))
        assert not found, found[:3]
        standings = cpu(
            lambda: compute_standings(results_from_store(store), bootstrap=BOOTSTRAP, seed=0)
        )
        parse = cpu(lambda: sum(1 for _ in store.records.all()))
        games = store.results.recorded_count()
    print(
        f"{games:>7,} games: check {check:6.2f} s CPU, standings {standings:6.2f} s, "
        f"parse every record (baseline) {parse:6.2f} s; check / parse {check / parse:4.2f}, "
        f"check / standings {check / standings:4.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/take5-bench-leaderboard"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    for size in args.sizes:
        run(size, args.cache)


if __name__ == "__main__":
    main()
