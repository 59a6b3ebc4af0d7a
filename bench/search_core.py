"""Rollouts per decision of the search bots at 10 ms, on take5.batch and on the compiled core.

example_bots/montecarlo and example_bots/planner score their card choices with rollouts of the
rest of the round: on the batched simulator (take5.batch) or, where it is compiled, on take5.core.
This bench asks both versions of each bot the same decisions (4-player standard games, views of
turns 1 to 6, where the planner does not yet search exact plans), interleaved, with a budget of
`--budget` seconds of CPU time (`clock="cpu"`: the machine's load does not change the count), and
prints the mean and median rollouts per decision.

Then a bot's first decision after its start, import counted: a fresh interpreter per run (the
best of `--starts`) imports the bot, builds it and answers one decision of 10 ms, with
TAKE5_CORE=python (take5.batch, as before the core) and with the compiled core; CPU and wall time
from the interpreter's start. Run: python bench/search_core.py [--decisions N] [--starts K]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import Game, RandomPlayer, Settings, View, core
from take5.harness import load_bot

BOTS = ("montecarlo", "planner")


def views(count: int, players: int) -> list[View]:
    """Views of seat 0 at turns 1-6 of random games (every other seat random)."""
    out: list[View] = []
    seed = 0
    while len(out) < count:
        game = Game(Settings(players=players), seed)
        randoms = [RandomPlayer(seed * 16 + s) for s in range(players)]
        while not game.is_over and len(out) < count:
            if game.turn <= 6 and game.waiting_for == tuple(range(players)):
                out.append(game.view(0))
            if game.waiting_for == tuple(range(players)):
                game.play([randoms[s].pick_card(game.view(s)) for s in range(players)])
            else:
                seat = game.waiting_for[0]
                game.choose_row(randoms[seat].choose_row(game.view(seat)))
        seed += 1
    return out


FIRST = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from take5 import Game, Settings
from take5.harness import load_bot
bot = load_bot(sys.argv[2], budget=0.01)
bot.pick_card(Game(Settings(players=4), 1).view(0))
wall = time.time() - float(sys.argv[3])
print(json.dumps({"cpu": time.process_time(), "wall": wall}))
"""


def first_decision(name: str, core_env: str, starts: int) -> tuple[float, float]:
    """(CPU, wall) seconds from a fresh interpreter's start to the bot's first answer (best of)."""
    best = (float("inf"), float("inf"))
    for _ in range(starts):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                FIRST,
                str(ROOT / "sdk"),
                str(ROOT / "example_bots" / name),
                repr(time.time()),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, core.ENV: core_env},
            timeout=120,
        )
        got = json.loads(done.stdout)
        best = (min(best[0], got["cpu"]), min(best[1], got["wall"]))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=60, help="decisions per bot and core")
    parser.add_argument("--budget", type=float, default=0.01, help="CPU seconds per decision")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--starts", type=int, default=5, help="fresh starts per bot and core")
    args = parser.parse_args()
    if not core.COMPILED:
        raise SystemExit(f"search_core: the compiled core is not in use ({core.REASON})")
    print(
        f"bench/search_core.py: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs, "
        f"{args.decisions} decisions of {args.players} players, {args.budget * 1000:g} ms CPU each"
    )
    print(
        f"  {'bot':<11} {'take5.batch mean':>16} {'median':>7} {'take5.core mean':>16} "
        f"{'median':>7} {'gain':>6}"
    )
    positions = views(args.decisions, args.players)
    for name in BOTS:
        folder = ROOT / "example_bots" / name
        bots = {
            kind: load_bot(folder, seed=1, budget=args.budget, clock="cpu", compiled=kind == "core")
            for kind in ("batch", "core")
        }
        counts: dict[str, list[int]] = {kind: [] for kind in bots}
        for view in positions:
            for kind, bot in bots.items():  # interleaved: the same load on both
                bot.pick_card(view)
                counts[kind].append(int(bot.last_rollouts))  # type: ignore[attr-defined]
        b, c = counts["batch"], counts["core"]
        print(
            f"  {name:<11} {statistics.mean(b):>16.0f} {statistics.median(b):>7.0f} "
            f"{statistics.mean(c):>16.0f} {statistics.median(c):>7.0f} "
            f"{statistics.mean(c) / statistics.mean(b):>5.1f}x",
            flush=True,
        )

    print("\n  first decision after start (best of fresh interpreters; CPU and wall seconds)")
    print(f"  {'bot':<11} {'take5.batch CPU':>15} {'wall':>7} {'take5.core CPU':>15} {'wall':>7}")
    for name in BOTS:
        before = first_decision(name, "python", args.starts)
        after = first_decision(name, "compiled", args.starts)
        print(
            f"  {name:<11} {before[0]:>15.3f} {before[1]:>7.3f} {after[0]:>15.3f} {after[1]:>7.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
