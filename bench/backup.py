"""What a backup of a live arena costs, against the plain file copy it replaces.

A tournament of ``--games`` games between two example bots is played first (local processes), then
its store is copied three ways, each timed in this process (CPU seconds of this process: nothing
else runs in it):

* ``cp``: shutil.copyfile of tournament.sqlite, the baseline (what an operator would do, and what
  can miss the commits still in the WAL of a live store);
* the online copy alone (SQLite's backup API: take5_arena/referee/store/backup.py ``online_copy``);
* ``referee backup`` in full (take5_arena/service/backup.py ``backup``): the online copies, the
  archives, and the check of the copy, which replays every record through the rules.

    python bench/backup.py [--games 300]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT))

from take5_arena.referee.store.backup import online_copy
from take5_arena.service.backup import backup


def referee(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "take5_arena", *args], check=True, capture_output=True)


def timed(what: str, action: Callable[[], object], baseline: float | None = None) -> float:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ratio = f"  {cpu / baseline:6.1f}x the baseline's CPU" if baseline else ""
    print(f"{what:<38} {wall:7.3f} s wall {cpu:7.3f} s CPU{ratio}")
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        t = work / "T"
        for bot in ("random", "lowest"):
            referee("submit", str(ROOT / "example_bots" / bot), "--name", bot, "-t", str(t),
                    "--sandbox", "local")  # fmt: skip
        referee("tournament", "run", "-t", str(t), "--players", "2", "--games", str(args.games),
                "--sandbox", "local", "-j", "2")  # fmt: skip
        size = (t / "tournament.sqlite").stat().st_size
        print(f"store: {args.games} games, {size / 1e6:.1f} MB")
        base = timed(
            "cp tournament.sqlite (baseline)",
            lambda: shutil.copyfile(t / "tournament.sqlite", work / "cp.sqlite"),
        )
        timed(
            "online copy (backup API)",
            lambda: online_copy(t / "tournament.sqlite", work / "online.sqlite"),
            base,
        )
        report = None

        def full() -> None:
            nonlocal report
            report = backup(t, work / "B")

        timed("referee backup (copy + check)", full, base)
        assert report is not None and not report.problems, report


if __name__ == "__main__":
    main()
