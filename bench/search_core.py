"""Rollouts per decision of the search bots at 10 ms, on take5.batch and on the compiled core.

example_bots/montecarlo and example_bots/planner score their card choices with rollouts of the
rest of the round: on the batched simulator (take5.batch) or, where it is compiled, on take5.core.
This bench asks both versions of each bot the same decisions (4-player standard games, views of
turns 1 to 6, where the planner does not yet search exact plans), interleaved, with a budget of
`--budget` seconds of CPU time (`clock="cpu"`: the machine's load does not change the count), and
prints the mean and median rollouts per decision.

Then a bot's first decision after its start, import counted: a fresh interpreter per run (the
best of `--starts`, interleaved) imports the bot, builds it and answers one decision of 10 ms, with
TAKE5_CORE=python (take5.batch, as before the core), with the compiled core and, with `--against
DIR`, the bot and SDK of another checkout (the tree before the core, say); CPU and wall time from
the interpreter's start. Every side reads its modules' bytecode from one cache of the bench's own
(PYTHONPYCACHEPREFIX, written on the first start), as a bot image carries compiled bytecode.
Run: python bench/search_core.py [--decisions N] [--starts K] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


def first_decision(root: Path, name: str, core_env: str, cache: str) -> tuple[float, float]:
    """(CPU, wall) seconds from a fresh interpreter's start to the bot's first answer."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            FIRST,
            str(root / "sdk"),
            str(root / "example_bots" / name),
            repr(time.time()),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**env, core.ENV: core_env, "PYTHONPYCACHEPREFIX": cache},
        timeout=120,
    )
    got = json.loads(done.stdout)
    return float(got["cpu"]), float(got["wall"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=60, help="decisions per bot and core")
    parser.add_argument("--budget", type=float, default=0.01, help="CPU seconds per decision")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--starts", type=int, default=5, help="fresh starts per bot and core")
    parser.add_argument("--against", type=Path, help="another checkout's bots and SDK, timed too")
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

    sides = {"take5.batch": (ROOT, "python"), "take5.core": (ROOT, "compiled")}
    if args.against is not None:
        sides = {"--against": (args.against.resolve(), "auto"), **sides}
    print(f"\n  first decision after start: best of {args.starts} fresh interpreters, CPU/wall s")
    print(f"  {'bot':<11}" + "".join(f" {side:>19}" for side in sides))
    with tempfile.TemporaryDirectory(prefix="take5-pyc-") as cache:
        for name in BOTS:
            best = {side: (float("inf"), float("inf")) for side in sides}
            for start in range(args.starts + 1):  # the first start of each side writes bytecode
                for side, (root, env) in sides.items():
                    cpu, wall = first_decision(root, name, env, cache)
                    if start:
                        best[side] = (min(best[side][0], cpu), min(best[side][1], wall))
            cells = "".join(f" {cpu:>11.3f}/{wall:<7.3f}" for cpu, wall in best.values())
            print(f"  {name:<11}{cells}", flush=True)


if __name__ == "__main__":
    main()
