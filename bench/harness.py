"""What the harness's referee-like time and its kept output cost: CPU time of `play_against`.

The harness now times every decision on its clock (a timer signal armed and disarmed around each
call), sends each request's `Clock` through the protocol's messages and keeps what the bots print
(file descriptors 1 and 2 redirected for the run, read after each decision). This runs the same
games with this checkout's SDK and with another's (``--baseline``, say a worktree of main, whose
harness only measured), each in its own process, and prints the CPU seconds of the games alone and
the ratio.

    python bench/harness.py --baseline /work/main/sdk [--games 24] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent / "sdk"

GAMES = """
import sys, time
from take5 import play_against
from take5.bots import HeuristicBot
games = int(sys.argv[1])
play_against(HeuristicBot(), ["random", "lowest"], games=1)  # imports and first calls: warm
t0 = time.process_time()
play_against(HeuristicBot(), ["random", "lowest", "heuristic"], games=games, seed=7)
print(time.process_time() - t0)
"""


def cpu_seconds(sdk: Path, games: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(sdk))
    out = subprocess.run(
        [sys.executable, "-c", GAMES, str(games)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout's sdk/")
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ours, theirs = [], []
    for _ in range(args.repeats):  # interleaved, so that a change of the host's load hits both
        theirs.append(cpu_seconds(args.baseline, args.games))
        ours.append(cpu_seconds(SDK, args.games))
    best_ours, best_theirs = min(ours), min(theirs)
    decisions = args.games * 4 * 10 * 1.0  # a rough count: seats x turns per round, >= 1 round
    print(f"{args.games} games of 4 seats, best of {args.repeats} runs, CPU seconds of the games:")
    print(f"  baseline ({args.baseline}): {best_theirs:.3f} s")
    print(f"  this checkout:             {best_ours:.3f} s")
    print(f"  ratio: {best_ours / best_theirs:.2f}")
    print(f"  (each run: baseline {theirs}, this {ours}; about {decisions:.0f}+ decisions)")


if __name__ == "__main__":
    main()
