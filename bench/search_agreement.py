"""What more time changes in the planner's choices (not a timed test): how often its card at a
short budget is the card a long search picks, on the same positions.

Positions: card decisions with 3 cards or more in hand, from games among planners playing a fixed
200 rollouts a decision (`--players`), shuffled, `--positions` of them. On each, a planner with
no early stop (`settle=None`, as planner 1.5 plays) picks a card at each budget of `--budgets`,
counted in CPU time, and once with `--oracle` seconds (another seed); the figure is the share of
positions where the two agree. A search whose short-budget card already agrees with the long one
almost always cannot gain much from more time of the same search: what it computes has converged,
and only a different computation (deeper, or a better model of the later play) would change it.

Run: python bench/search_agreement.py --players 2 --positions 40
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import Settings, View, play_game
from take5.harness import load_bot


def positions(planner: Any, players: int, count: int, seed: int) -> list[View]:
    """`count` card decisions with 3 cards or more, from games of fixed-rollout planners."""
    views: list[View] = []

    class Grab:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def pick_card(self, view: View) -> int:
            if len(view.hand) >= 3:
                views.append(view)
            return int(self.inner.pick_card(view))

        def choose_row(self, view: View) -> int:
            return int(self.inner.choose_row(view))

    game = 0
    while len(views) < 3 * count:
        seats: list[Any] = [Grab(planner(seed=seed + game, rollouts=200))]
        seats += [planner(seed=seed + 100 + game + i, rollouts=200) for i in range(players - 1)]
        play_game(seats, Settings(players=players), seed=seed + game)
        game += 1
    random.Random(seed).shuffle(views)
    return views[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bot", default=str(ROOT / "example_bots" / "planner" / "bot.py"))
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.01, 0.03, 0.09, 0.3])
    parser.add_argument("--oracle", type=float, default=1.2, help="the long search's seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    planner: Any = type(load_bot(Path(args.bot)))
    views = positions(planner, args.players, args.positions, args.seed)
    agree = dict.fromkeys(args.budgets, 0)
    started = time.process_time()
    for i, view in enumerate(views):
        long = planner(seed=999 + i, budget=args.oracle, clock="cpu", settle=None)
        best = long.pick_card(view)
        for budget in args.budgets:
            bot = planner(seed=i, budget=budget, clock="cpu", settle=None)
            agree[budget] += bot.pick_card(view) == best
    shares = ", ".join(f"{1000 * b:.0f} ms {100 * agree[b] / len(views):.1f}%" for b in agree)
    print(
        f"{args.players} players, {len(views)} positions, agreement with {args.oracle:.1f} s: "
        f"{shares} ({time.process_time() - started:.0f} s CPU)"
    )


if __name__ == "__main__":
    main()
