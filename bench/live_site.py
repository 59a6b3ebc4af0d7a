"""Live site benchmark: what a complete new version of the site costs each time `referee serve`
republishes, against writing into the site folder itself.

    python bench/live_site.py                      # 1,000 and 10,000 games
    python bench/live_site.py --sizes 10000 --repeat 5

The stores are bench/leaderboard.py's (8 bots at tables of 4; built once into its cache folder,
copied here before use). For each size the site is published once in full, then republished
``--repeat`` times with the same games, two ways, alternating:

* ``in place`` (the baseline, the plainest way and what serve did before): ``write_site`` into the
  site folder (incremental: the standings pages are rewritten, the replays kept);
* ``versioned``: ``publish_versioned`` (take5_arena/leaderboard/site_versions.py): a copy of the
  current version (replays hard-linked, the rest copied), the same incremental ``write_site`` into
  it, the switch, pruning.

The figure is this process's CPU time (user + system) for the republication alone (the standings
are computed once, outside), its median over the repeats, and the ratio versioned / in place; and
the disk a version adds (blocks of files that are not hard links to the previous version).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT / "bench"))

from leaderboard import cached_store

from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.site_build import write_site
from take5_arena.leaderboard.site_versions import current_version, publish_versioned
from take5_arena.standings import load_tournament


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def own_bytes(folder: Path) -> int:
    """Bytes of the files of ``folder`` that no other version shares (link count 1)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            if st.st_nlink == 1:
                total += st.st_blocks * 512
    return total


def run(size: int, cache: Path, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="take5-live-site-") as tmp:
        store = Path(tmp) / "T"
        shutil.copytree(cached_store(cache, size), store)
        games = load_tournament(store)
        table = compute_standings(games.results, bootstrap=0, seed=0)

        def write(folder: Path) -> object:
            return write_site(folder, games, table, title="bench")

        plain, live = Path(tmp) / "plain", Path(tmp) / "live"
        write(plain)
        publish_versioned(live, write)
        in_place, versioned = [], []
        for _ in range(repeat):
            t0 = cpu()
            write(plain)
            in_place.append(cpu() - t0)
            t0 = cpu()
            publish_versioned(live, write)
            versioned.append(cpu() - t0)
        a, b = statistics.median(in_place), statistics.median(versioned)
        current = current_version(live)
        assert current is not None
        print(
            f"{size:>7,} games: republish in place {a:6.3f} s CPU, versioned {b:6.3f} s CPU "
            f"(ratio {b / a:4.2f}); a version adds {own_bytes(current) / 2**20:.1f} MiB of "
            f"{sum(f.stat().st_size for f in current.rglob('*') if f.is_file()) / 2**20:.1f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/take5-bench-leaderboard"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for size in args.sizes:
        run(size, args.cache, args.repeat)


if __name__ == "__main__":
    main()
