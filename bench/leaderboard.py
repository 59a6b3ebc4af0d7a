"""Leaderboard benchmark: `referee standings` and `referee publish` at 1k, 10k and 100k games.

    python bench/leaderboard.py                    # 1,000 and 10,000 games
    python bench/leaderboard.py --sizes 1000 10000 100000
    python bench/leaderboard.py --cache /tmp/take5-bench-leaderboard   # where the stores are kept

Stores: 8 bots of different strength at tables of 4 with duplicate deals, played in-process
through the project's own ``run_tournament`` and ``store.results.record_game`` (a table runner that
plays each game with the engine instead of bot processes; the records have the shape of the match
layer's: seats with name, entrant, version and handshake fields, a timeout fault now and then). A
store is built once per size into the cache folder and reused (100,000 games take a while to play).

For each size, each command runs as its own process (``python -m take5_arena``) and the figures are
that process's CPU time (user + system, from ``wait4``) and its peak resident memory: the high-water
mark the kernel keeps for the process's own memory (``VmHWM`` in ``/proc/self/status``), which the
command reports as it exits (`PEAK`). Not ``ru_maxrss``: a forked child starts with its parent's
high-water mark, so every command would seem at least as large as this benchmark.

* ``standings``: ``referee standings -t DIR`` (results table only), and ``referee tournament
  status``;
* ``publish``: ``referee publish -t DIR -o OUT --full`` into an empty folder, and the site's size,
  file count and largest folder;
* ``verify --site``: ``referee verify --site OUT`` on that site (every record replayed, the
  standings recomputed, the site published again into a scratch folder and every data file
  compared), with its ratio to the full publish;
* ``re-publish``: 1,000 more games played into a copy of the store, then ``referee publish`` into
  the same site folder (incremental), with its ratio to the full publish.

The baseline, measured in the same run: reading and parsing every record of the store once
(``store.records.all()``), which is what ``standings`` did before it read the results table alone.
Targets at 100,000 games (issue 18): standings < 500 MB and < 15 s CPU; publish < 1 GB;
re-publish after 1,000 new games < 10% of a full publish; site < 400 MB.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import Fault, View, cheapest_row, cost_of_card, play_game
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import GameOutcome, TableSpec, run_tournament

BOTS = {
    "ace": 0.95,
    "blade": 0.85,
    "comet": 0.75,
    "dune": 0.6,
    "ember": 0.45,
    "flint": 0.3,
    "gale": 0.15,
    "haze": 0.0,
}
SETTINGS = {
    "players": 4,
    "sandbox": "local",
    "executor": "local",
    "concurrency": 1,
    "duplicate": True,
}
BOOTSTRAP = 200


class Mixed:
    """The cheapest card now with probability p, else a random card; the cheapest row."""

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.rng = p, random.Random(seed)

    def pick_card(self, view: View) -> int:
        if self.rng.random() < self.p:
            return min(view.hand, key=lambda c: (cost_of_card(view.rows, c), -c))
        return self.rng.choice(view.hand)

    def choose_row(self, view: View) -> int:
        return cheapest_row(view.rows)

    def draft_card(self, view: View) -> int:
        return min(view.pool)


def engine_runner(
    spec: TableSpec, on_game: Callable[[GameOutcome], None] | None = None
) -> list[GameOutcome]:
    """Plays a table's games in-process, with records shaped like the match layer's."""
    out = []
    n = len(spec.seats)
    for gid, rotation in spec.games:
        players = [
            Mixed(BOTS[s.name], spec.deal_seed % 100_000 + 7 * i + rotation)
            for i, s in enumerate(spec.seats)
        ]
        game = play_game(players, spec.settings.game, spec.deal_seed, rotation=rotation)
        if spec.deal_seed % 17 == 0:  # now and then a slow answer
            game.faults.append(Fault(rotation % n, 1, 4, "timeout", "no answer within 1.0 s"))
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
        record = game.record(game_id=gid, seats=seats)
        out.append(GameOutcome(gid, record, seconds=0.0))
        if on_game:
            on_game(out[-1])
    return out


JOBS = 1  # tables played at once (more than 1: worker processes)


def build_store(folder: Path, games: int, seed: int = 0) -> None:
    """A tournament of ``games`` games (more are added to an existing store with another seed)."""
    if not (folder / "tournament.sqlite").exists():
        with Store(folder, create=True) as store:
            for name in BOTS:
                store.versions.add(
                    name, source_hash=f"src-{name}", bot_dir=f"/bots/{name}", kind="python"
                )
    executor = {"executor": "process", "concurrency": JOBS} if JOBS > 1 else {}
    report = run_tournament(
        folder, {**SETTINGS, **executor, "games": games, "seed": seed}, runner=engine_runner
    )
    if report.unplayed:
        raise SystemExit(f"{folder}: {report.unplayed} games not played")


def cached_store(cache: Path, games: int) -> Path:
    folder = cache / f"store-{games}"
    done = folder / "complete"
    if not done.exists():
        if folder.exists():
            shutil.rmtree(folder)
        t0 = time.perf_counter()
        print(f"  building a store of {games:,} games in {folder} ...", flush=True)
        build_store(folder, games)
        done.write_text("ok\n")
        print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
    return folder


PEAK = """\
import atexit, runpy, sys
out = sys.argv.pop(1)

def peak():
    with open("/proc/self/status") as status, open(out, "w") as fh:
        fh.write(next(line for line in status if line.startswith("VmHWM:")).split()[1])

atexit.register(peak)
if sys.argv[1] == "-m":
    del sys.argv[:2]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    code = sys.argv.pop(2)
    del sys.argv[0]
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
"""
"""Runs ``python -m MODULE ...`` or ``python -c CODE ...`` and, as it exits, writes its peak
resident memory (kB, VmHWM: the process's own, since its exec) to the file named first."""


def measure(args: list[str]) -> tuple[float, float, float]:
    """(CPU seconds, peak MB, wall seconds) of one command (``[python, -m|-c, ...]``) run as its
    own process."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    with tempfile.NamedTemporaryFile(prefix="take5-peak-") as peak_file:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [args[0], "-c", PEAK, peak_file.name, *args[1:]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {err[-2000:]}")
        peak_kb = int(Path(peak_file.name).read_text() or 0)
    return usage.ru_utime + usage.ru_stime, peak_kb / 1024, wall


def referee(*args: str) -> list[str]:
    return [sys.executable, "-m", "take5_arena", *args]


def baseline(folder: Path) -> list[str]:
    code = (
        "import sys; from take5_arena.referee.store import Store; s = Store(sys.argv[1], "
        "readonly=True); n = sum(1 for _ in s.records.all()); s.close()"
    )
    return [sys.executable, "-c", code, str(folder)]


def site_size(folder: Path) -> tuple[int, int, int]:
    """(bytes, files, most files in one folder) of a site."""
    total = files = widest = 0
    for _, _, names in os.walk(folder):
        widest = max(widest, len(names))
    for path in folder.rglob("*"):
        if path.is_file():
            files += 1
            total += path.stat().st_size
    return total, files, widest


def run(size: int, cache: Path, work: Path) -> None:
    store = cached_store(cache, size)
    with Store(store, readonly=True) as s:
        games = s.results.recorded_count()
    base_cpu, base_mb, _ = measure(baseline(store))
    cpu, mb, _ = measure(referee("standings", "-t", str(store), "--bootstrap", str(BOOTSTRAP)))
    print(
        f"{games:>8,} games  standings   {cpu:7.2f} s CPU ({1e3 * cpu / games:.3f} ms/game)  "
        f"{mb:7.0f} MB peak   [baseline, parsing every record once: {base_cpu:.2f} s, "
        f"{base_mb:.0f} MB; ratio {cpu / base_cpu:.2f}]",
        flush=True,
    )
    s_cpu, s_mb, _ = measure(referee("tournament", "status", "-t", str(store)))
    print(f"{'':>8}        tournament status {s_cpu:7.2f} s CPU  {s_mb:7.0f} MB peak", flush=True)
    site = work / f"site-{size}"
    shutil.rmtree(site, ignore_errors=True)
    p_cpu, p_mb, _ = measure(
        referee(
            "publish",
            "-t",
            str(store),
            "-o",
            str(site),
            "--bootstrap",
            str(BOOTSTRAP),
            "--no-timestamp",
            "--full",
        )
    )
    size_b, files, widest = site_size(site)
    print(
        f"{'':>8}        publish     {p_cpu:7.2f} s CPU ({1e3 * p_cpu / games:.3f} ms/game)  "
        f"{p_mb:7.0f} MB peak   site {size_b / 1e6:.0f} MB ({size_b / games / 1e3:.2f} KB/game), "
        f"{files:,} files, at most {widest:,} in a folder",
        flush=True,
    )
    v_cpu, v_mb, _ = measure(referee("verify", "--site", str(site)))
    print(
        f"{'':>8}        verify --site {v_cpu:7.2f} s CPU  {v_mb:7.0f} MB peak   (every record "
        f"replayed, the site published again and compared: {v_cpu / p_cpu:.2f}x the publish)",
        flush=True,
    )
    more = work / f"store-{size}-plus"
    shutil.rmtree(more, ignore_errors=True)
    shutil.copytree(store, more)
    build_store(more, 1000, seed=1)
    r_cpu, r_mb, _ = measure(
        referee(
            "publish",
            "-t",
            str(more),
            "-o",
            str(site),
            "--bootstrap",
            str(BOOTSTRAP),
            "--no-timestamp",
        )
    )
    print(
        f"{'':>8}        re-publish  {r_cpu:7.2f} s CPU after 1,000 new games  {r_mb:7.0f} MB "
        f"peak   {100 * r_cpu / p_cpu:.1f}% of the full publish",
        flush=True,
    )
    shutil.rmtree(more, ignore_errors=True)
    shutil.rmtree(site, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/take5-bench-leaderboard"))
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="tables played at once while building a store (worker processes; same records)",
    )
    parser.add_argument(
        "--build-only", action="store_true", help="only build the stores missing in the cache"
    )
    ns = parser.parse_args()
    global JOBS
    JOBS = ns.jobs
    ns.cache.mkdir(parents=True, exist_ok=True)
    work = ns.cache / "work"
    work.mkdir(exist_ok=True)
    print(
        f"stores of 8 bots at tables of 4 (duplicate deals); {BOOTSTRAP} bootstrap resamples; "
        "each command its own process"
    )
    for size in ns.sizes:
        if ns.build_only:
            cached_store(ns.cache, size)
        else:
            run(size, ns.cache, work)


if __name__ == "__main__":
    main()
