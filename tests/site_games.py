"""A small, varied set of real game records for the publishing tests (test_publish, test_site).

Real games of the engine between in-process players of different strength, plus what a referee
adds: faults (one of them a forfeit), a duplicate deal (one seed, every rotation), a professional
game with its draft, an awkward bot name, and one game cut off before its end (replayable, not
rated). Deterministic.
"""

from __future__ import annotations

import random

from take5 import Fault, Game, Phase, Settings, cheapest_row, cost_of_card, play_game

# name -> probability of playing the cheapest card now (else a random one)
STRENGTHS = {"alpha": 1.0, "bravo": 0.6, "charlie": 0.25, "delta <b>&|x": 0.0}
NAMES = list(STRENGTHS)
FAULTY = "charlie"


class Mixed:
    """The cheapest card now with probability p, else a random card; cheapest row; lowest draft."""

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.rng = p, random.Random(seed)

    def pick_card(self, view) -> int:
        if self.rng.random() < self.p:
            return min(view.hand, key=lambda c: (cost_of_card(view.rows, c), -c))
        return self.rng.choice(view.hand)

    def choose_row(self, view) -> int:
        return cheapest_row(view.rows) if self.rng.random() < self.p else self.rng.randrange(4)

    def draft_card(self, view) -> int:
        return min(view.pool)


def seats(names) -> list[dict]:
    return [{"name": n, "kind": "test"} for n in names]


def make_records(games: int = 14) -> dict[str, dict]:
    """game id -> record."""
    rng = random.Random(5)
    records: dict[str, dict] = {}
    for g in range(games):
        names = rng.sample(NAMES, 4) if g % 3 else rng.sample(NAMES, 3)
        players = [Mixed(STRENGTHS[n], 100 * g + s) for s, n in enumerate(names)]
        game = play_game(players, Settings(players=len(names)), seed=1000 + g)
        if g % 4 == 1 and FAULTY in names:
            seat = names.index(FAULTY)
            game.faults.append(Fault(seat, 1, 3, "timeout", "no answer within 1.0 s"))
            if g % 8 == 1:
                game.faults.append(Fault(seat, 2, 7, "crash", "the bot exited with code 1"))
                game.forfeit(seat)
        gid = f"t{g:03d}"
        records[gid] = game.record(
            game_id=gid, seats=seats(names), extra={"started_at": f"2025-01-01T10:{g:02d}:00Z"}
        )
    # a duplicate deal: one seed played with every rotation by the same three bots
    trio = ["alpha", "bravo", "delta <b>&|x"]
    for rotation in range(3):
        players = [Mixed(STRENGTHS[n], 7 + rotation) for n in trio]
        game = play_game(players, Settings(players=3), seed=4242, rotation=rotation)
        gid = f"dup-r{rotation}"
        records[gid] = game.record(
            game_id=gid, seats=seats(trio), extra={"started_at": f"2025-01-01T11:0{rotation}:00Z"}
        )
    # a professional game (open draft)
    pro = ["bravo", "alpha", "charlie"]
    game = play_game(
        [Mixed(STRENGTHS[n], 99) for n in pro],
        Settings(players=3, variant="professional", threshold=40),
        seed=3,
    )
    records["pro-1"] = game.record(
        game_id="pro-1", seats=seats(pro), extra={"started_at": "2025-01-01T12:00:00Z"}
    )
    # a game cut off in its second round
    cut = Game(Settings(players=4), seed=77)
    players = [Mixed(STRENGTHS[n], 5) for n in NAMES]
    while cut.round < 2 or cut.turn < 4:
        cut.play([p.pick_card(cut.view(s)) for s, p in enumerate(players)])
        while cut.waiting_for and cut.phase is Phase.CHOOSE_ROW:
            s = cut.waiting_for[0]
            cut.choose_row(players[s].choose_row(cut.view(s)))
    records["cut-1"] = cut.record(game_id="cut-1", seats=seats(NAMES))
    return records
