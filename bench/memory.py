"""Bots in memory against bots as processes: what a unit test of the match loop costs each way.

The same match (4 bots: lowest, random, heuristic, random; ``--games`` games, one seed) is played

* in memory (take5_arena/referee/match/memory.py): the bots are take5 ``Bot`` objects in this
  process, every request and answer still encoded and decoded as over the wire, no gRPC;
* as local processes over gRPC (the baseline, what tests used before): the example bots of
  example_bots/, each started by the referee and serving on its own Unix socket.

Printed: wall seconds, CPU seconds (this process and its children: the bots' processes count), and
games per CPU-second of each, and the ratio. Both plays give the same records (checked).

    python bench/memory.py [--games 20]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT))

from take5.bots import HeuristicBot, LowestBot, RandomBot
from take5_arena.referee.match import Match, MatchConfig, in_memory
from take5_arena.referee.match.results import MatchResult

EXAMPLES = ROOT / "example_bots"


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(play: object) -> tuple[float, float, MatchResult]:
    wall, used = time.perf_counter(), cpu()
    result = play()  # type: ignore[operator]
    return time.perf_counter() - wall, cpu() - used, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    config = MatchConfig(games=args.games, seed=7)

    def in_process() -> MatchResult:
        refs, launcher = in_memory([LowestBot(), RandomBot(0), HeuristicBot(), RandomBot(0)])
        with Match(refs, config, launcher=launcher) as match:
            return match.play()

    def processes() -> MatchResult:
        bots = [str(EXAMPLES / name) for name in ("lowest", "random", "heuristic", "random")]
        with Match(bots, config) as match:
            return match.play()

    in_process()  # warm-up: imports, first calls
    memory = measure(in_process)
    grpc = measure(processes)
    for label, (wall, used, result) in (("in memory", memory), ("processes (gRPC)", grpc)):
        print(
            f"{label:>17}: {len(result.games)} games in {wall:6.2f} s wall, {used:6.2f} CPU-s: "
            f"{len(result.games) / used:7.1f} games per CPU-second"
        )
    print(f"in memory: {grpc[1] / memory[1]:.1f}x fewer CPU-seconds than the same match over gRPC")
    same = [g.scores for g in memory[2].games] == [g.scores for g in grpc[2].games]
    print(f"same games both ways: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
