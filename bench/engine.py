"""Engine speed: games per second with in-process random players, against an inline loop.

The inline loop plays the same rules with the same shuffle and the same random decisions, but with
no views, no records and no state machine: it is the floor the engine's readability costs against.
The engine is measured twice: without records (`play_game(..., keep_record=False)`: the record is
never built) and with them (built, then `game.record()` as the referee does).
Run: python bench/engine.py [--seconds S]
"""

from __future__ import annotations

import argparse
import time

from take5 import RandomPlayer, Settings, play_game
from take5.rules import BULL_HEADS, HAND_SIZE
from take5.shuffle import SplitMix64


def inline_game(players: int, seed: int) -> list[int]:
    """One standard game in one function: the baseline."""
    rng = SplitMix64(seed)
    pickers = [SplitMix64(seed * 100 + i) for i in range(players)]
    scores = [0] * players
    full = list(range(1, 105))
    while max(scores) < 66:
        cards = rng.shuffled(full)
        hands = [sorted(cards[p * HAND_SIZE : (p + 1) * HAND_SIZE]) for p in range(players)]
        start = players * HAND_SIZE
        rows = [[c] for c in cards[start : start + 4]]
        for _ in range(HAND_SIZE):
            chosen = []
            for seat in range(players):
                hand = hands[seat]
                chosen.append((hand.pop(pickers[seat].below(len(hand))), seat))
            chosen.sort()
            for card, seat in chosen:
                best, best_end = -1, 0
                for index, row in enumerate(rows):
                    end = row[-1]
                    if best_end < end < card:
                        best, best_end = index, end
                if best < 0:
                    best = pickers[seat].below(4)
                    scores[seat] += sum(BULL_HEADS[c] for c in rows[best])
                    rows[best] = [card]
                elif len(rows[best]) == 5:
                    scores[seat] += sum(BULL_HEADS[c] for c in rows[best])
                    rows[best] = [card]
                else:
                    rows[best].append(card)
    return scores


def rate(fn, seconds: float) -> float:
    """Games per second of fn(seed), run for about `seconds`."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(20):
            fn(count)
            count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument(
        "--repeats", type=int, default=5, help="interleaved windows per measurement"
    )
    args = parser.parse_args()
    print(
        f"{'players':>7} {'inline g/s':>11} {'no-record g/s':>14} {'+record g/s':>12} {'ratio':>6}"
    )
    for n in (2, 4, 10):
        settings = Settings(players=n)

        def engine(seed: int, record: bool, n: int = n, settings: Settings = settings) -> None:
            # Without records, the engine skips building the record altogether (keep_record=False).
            game = play_game(
                [RandomPlayer(seed * 100 + i) for i in range(n)], settings, seed, keep_record=record
            )
            if record:
                game.record()

        # Interleave short windows and keep each one's best, so that load from other processes
        # on a shared machine hits all three alike.
        inline = bare = recorded = 0.0
        for _ in range(args.repeats):
            inline = max(
                inline, rate(lambda s, n=n: inline_game(n, s), args.seconds / args.repeats)
            )
            bare = max(bare, rate(lambda s: engine(s, False), args.seconds / args.repeats))
            recorded = max(recorded, rate(lambda s: engine(s, True), args.seconds / args.repeats))
        print(f"{n:>7} {inline:>11.0f} {bare:>14.0f} {recorded:>12.0f} {recorded / inline:>6.2f}")
    print("ratio = engine with records / inline loop (target for 4 players: >= 0.75)")


if __name__ == "__main__":
    main()
