"""Engine speed: games per CPU-second with in-process random players, against a plain Python loop.

The baseline is the plainest Python loop of the same rules: the same deal sizes, rows, placement,
sixth-card and lowest-card takes, threshold and end of game, with Python's own `random` for the
shuffle and the random decisions, and no views, records, validation or state machine. It is the
floor the engine's readability and its guarantees (the project's own shuffle, a seed giving the
same game on every machine, every move checked, a replayable record) cost against. The engine is
measured twice: without records (`play_game(..., keep_record=False)`: the record is never built)
and with them (built, then `game.record()` as the referee does).

The compiled core (`take5.core.random_game`: the same games as `play_game` with RandomPlayers, in
C) is measured in the same run against the plainest C of the same rules (bench/proto.c, compiled
with cc by the bench: bench/cproto.py). Target: the core >= 0.3x the C prototype's games per
CPU-second. Run: python bench/engine.py [--seconds S] [--repeats R]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import cproto

from take5 import RandomPlayer, Settings, core, play_game
from take5.rules import BULL_HEADS, HAND_SIZE


def inline_game(players: int, seed: int) -> list[int]:
    """One standard game of random players in one function: the baseline."""
    rng = random.Random(seed)
    scores = [0] * players
    deck = list(range(1, 105))
    while max(scores) < 66:
        rng.shuffle(deck)
        hands = [deck[p * HAND_SIZE : (p + 1) * HAND_SIZE] for p in range(players)]
        start = players * HAND_SIZE
        rows = [[c] for c in deck[start : start + 4]]
        for _ in range(HAND_SIZE):
            chosen = sorted(
                (hand.pop(rng.randrange(len(hand))), seat) for seat, hand in enumerate(hands)
            )
            for card, seat in chosen:
                best, best_end = -1, 0
                for index, row in enumerate(rows):
                    end = row[-1]
                    if best_end < end < card:
                        best, best_end = index, end
                if best < 0:
                    best = rng.randrange(4)
                    scores[seat] += sum(BULL_HEADS[c] for c in rows[best])
                    rows[best] = [card]
                elif len(rows[best]) == 5:
                    scores[seat] += sum(BULL_HEADS[c] for c in rows[best])
                    rows[best] = [card]
                else:
                    rows[best].append(card)
    return scores


def rate(fn: Callable[[int], object], seconds: float) -> float:
    """Games per CPU-second of fn(seed) (this process's CPU time: another process's load on a
    shared machine does not count), run for about `seconds` of it."""
    count = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        for _ in range(20):
            fn(count)
            count += 1
    return count / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument(
        "--repeats", type=int, default=5, help="interleaved windows per measurement"
    )
    args = parser.parse_args()
    print(f"take5.core: {'compiled' if core.COMPILED else 'pure Python (' + core.REASON + ')'}")
    print(
        f"{'players':>7} {'plain loop g/s':>14} {'no-record g/s':>14} {'+record g/s':>12} "
        f"{'ratio':>6} {'core g/s':>10} {'C g/s':>10} {'core/C':>7} {'engine/C':>9}"
    )
    worst = float("inf")
    for n in (2, 4, 10):
        settings = Settings(players=n)

        def engine(seed: int, record: bool, n: int = n, settings: Settings = settings) -> None:
            # Without records, the engine skips building the record altogether (keep_record=False).
            game = play_game(
                [RandomPlayer(seed * 100 + i) for i in range(n)], settings, seed, keep_record=record
            )
            if record:
                game.record()

        def compiled(seed: int, n: int = n, settings: Settings = settings) -> None:
            core.random_game(settings, seed, [seed * 100 + i for i in range(n)])

        def inline_of(s: int, n: int = n) -> list[int]:
            return inline_game(n, s)

        # Interleave short windows and keep each one's best, so that load from other processes
        # on a shared machine hits all of them alike.
        inline = bare = recorded = fast = c = 0.0
        window = args.seconds / args.repeats
        for _ in range(args.repeats):
            inline = max(inline, rate(inline_of, window))
            bare = max(bare, rate(lambda s: engine(s, False), window))
            recorded = max(recorded, rate(lambda s: engine(s, True), window))
            fast = max(fast, rate(compiled, window))
            c = max(c, cproto.rate("games", n, window))
        worst = min(worst, fast / c)
        print(
            f"{n:>7} {inline:>14.0f} {bare:>14.0f} {recorded:>12.0f} {recorded / inline:>6.2f}"
            f" {fast:>10.0f} {c:>10.0f} {fast / c:>6.2f}x {bare / c:>8.4f}x",
            flush=True,
        )
    print("ratio = engine with records / the plain loop of the same rules")
    print(
        f"target: take5.core >= 0.3x the C prototype: lowest {worst:.2f}x, "
        f"{'met' if worst >= 0.3 else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
